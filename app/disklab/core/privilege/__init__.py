"""Where the rest of DiskLab finds the privileged helper's client: the names of
core.privilege.client and core.privilege.tool_client (the helper, its protocol and its
subjects live in the core.privileged package)."""

from __future__ import annotations

from disklab.core.privilege.client import (
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
from disklab.core.privilege.tool_client import PrivilegedTool

__all__ = ["HELPER_LAUNCHER", "HELPER_MODULE", "MODES", "POLKIT_ACTION", "HelperRefused",
           "Privileged", "PrivilegedTool", "choose_mode", "helper_argv", "launcher",
           "password_needed", "sudo_needs_password"]
