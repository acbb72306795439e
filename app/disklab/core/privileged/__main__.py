"""`python -I -m disklab.core.privileged`: the privileged helper. Only the standard library
and the trust check are imported before the check has passed (trust.boot)."""

import sys

from disklab.core.privileged import trust

sys.exit(trust.boot())
