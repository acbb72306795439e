"""The privileged helper started through sudo (what a normal user's session uses when polkit
is absent): one helper, many requests, targets re-checked by the helper itself."""

from __future__ import annotations

import pytest

from disklab.core import proc
from disklab.core.helper_client import Privileged
from disklab.core.system.mountinfo import filesystem_of
from disklab.core.vocab.errors import SafetyError
from tests.helpers import ask

pytestmark = [pytest.mark.root]


def test_sudo_helper_serves_a_session_and_refuses_the_root_disk() -> None:
    if proc.which("sudo") is None:
        pytest.fail("sudo is missing: make test installs it (scripts/install-system-packages.sh)")
    with Privileged(mode="sudo") as priv:
        first = ask(priv, "ping")
        assert first["uid"] == 0
        assert ask(priv, "ping")["pid"] == first["pid"]  # one helper for the whole session
        with pytest.raises(SafetyError):
            ask(priv, "wipefs", device=_root_device(), confirm=None, library_path=None)


def _root_device() -> str:
    return filesystem_of("/")["source"]
