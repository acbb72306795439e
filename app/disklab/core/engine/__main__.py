"""`python -m disklab.core.engine`: see disklab.core.engine."""

import sys

from disklab.core.engine.cli import main

sys.exit(main())
