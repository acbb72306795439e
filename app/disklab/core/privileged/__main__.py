"""`python -I -m disklab.core.privileged`: the privileged helper (helper.main)."""

import sys

from disklab.core.privileged.helper import main

sys.exit(main())
