"""Where the rest of DiskLab finds the root helper's client: the names of
core.helper_client.client and core.helper_client.tool_client (the helper, its protocol and its
subjects live in the core.root_helper package)."""

from __future__ import annotations

from disklab.core.helper_client.client import (
    HELPER_LAUNCHER,
    HELPER_MODULE,
    MODES,
    POLKIT_ACTION,
    HelperRefused,
    Privileged,
    choose_mode,
    helper_argv,
    launcher,
    password_needed,
    sudo_needs_password,
)
from disklab.core.helper_client.tool_client import PrivilegedTool

__all__ = ["HELPER_LAUNCHER", "HELPER_MODULE", "MODES", "POLKIT_ACTION", "HelperRefused",
           "Privileged", "PrivilegedTool", "choose_mode", "helper_argv", "launcher",
           "password_needed", "sudo_needs_password"]
