"""`python -I -m disklab.core.root_helper`: the privileged helper. Only the standard library
and the trust check are imported before the check has passed (trust.boot)."""

import sys

from disklab.core.root_helper import trust

sys.exit(trust.boot())
