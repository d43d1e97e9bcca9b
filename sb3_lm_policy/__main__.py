import sys

from sb3_lm_policy.cli import main

sys.exit(main())
