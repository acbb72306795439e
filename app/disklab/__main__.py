"""`python -m disklab`: the same command line as `disklab`."""

import sys

from disklab.cli.main import main

sys.exit(main())
