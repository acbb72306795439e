"""The plan's `[hosts.NAME]` tables and a fio test's `hosts` parameter, checked by key.

Every value that ends up in an ssh or fio argv is checked here first (rule: no shell strings,
option values validated): an address or a user that starts with '-' would be read by ssh as an
option, a directory with a line break would add lines to fio's job file.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Protocol

from disklab.core.vocab.model import Host

HOSTS_KEY = "hosts"
DEFAULT_PORT = 8765  # fio's own default server port
STARTS = ("ssh", "running")
HOST_KEYS = ("address", "port", "start", "directory", "user", "ssh_port")
# keys a plan may not hold: ssh's configuration is the user's own (core.hosts.ssh_settings)
NOT_IN_A_PLAN = {
    "ssh_config": "a plan does not choose ssh's configuration (it can run commands: "
                  "ProxyCommand, LocalCommand, Match exec); ssh reads your ~/.ssh/config, or "
                  "the file chosen on the Hosts page (ssh_config in "
                  "$XDG_CONFIG_HOME/disklab/hosts.toml)",
}
RESERVED_NAMES = ("all",)  # fio's aggregate row of a several-host case is host = "all"
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")  # no '+': "h1+h2" lists hosts
_ADDRESS = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,252}$")
_USER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")
MAX_HOSTS = 64  # servers of one case: one client connection and one job file each


class Checker(Protocol):
    def error(self, key: str, message: str) -> None: ...

    def warn(self, key: str, message: str) -> None: ...


def is_loopback(address: str) -> bool:
    """127.0.0.0/8, ::1 and 'localhost': reachable from this machine only."""
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _port(table: Mapping[str, Any], key: str, where: str, check: Checker,
          default: int | None) -> int | None:
    value = table.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        check.error(f"{where}.{key}", f"{value!r} is not a TCP port (1-65535)")
        return None
    return value


def read_hosts(doc: Mapping[str, Any], check: Checker, base_dir: Path) -> tuple[Host, ...]:
    """The [hosts.*] tables as Hosts; every problem by key. A plain address:port server gets the
    security warning: it runs any job it is sent, unauthenticated."""
    raw = doc.get(HOSTS_KEY)
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        check.error(HOSTS_KEY, "must be tables: [hosts.h1] address = \"node1\"")
        return ()
    hosts = []
    for name, table in raw.items():
        where = f"{HOSTS_KEY}.{name}"
        if not _NAME.match(name):
            check.error(where, "a host name is 1-32 letters, digits, '_' or '-'")
            continue
        if name.lower() in RESERVED_NAMES:
            check.error(where, f"{name!r} is reserved: the total row of a case on several "
                        "hosts is host = \"all\"; name the host otherwise")
            continue
        if not isinstance(table, dict):
            check.error(where, "must be a table with address = \"...\"")
            continue
        for key in table:
            if key in NOT_IN_A_PLAN:
                check.error(f"{where}.{key}", NOT_IN_A_PLAN[key])
            elif key not in HOST_KEYS:
                check.error(f"{where}.{key}", f"unknown key (known: {', '.join(HOST_KEYS)})")
        address = table.get("address")
        if not isinstance(address, str) or not _ADDRESS.match(address):
            check.error(f"{where}.address", "missing or not a host name or IP address "
                        "(letters, digits, '.', ':', '-', not starting with '-')")
            continue
        start = table.get("start", "ssh")
        if start not in STARTS:
            check.error(f"{where}.start", f"{start!r} is not one of {', '.join(STARTS)}")
            continue
        port = _port(table, "port", where, check, DEFAULT_PORT)
        ssh_port = _port(table, "ssh_port", where, check, None)
        directory = table.get("directory", "/tmp")
        if (not isinstance(directory, str) or not directory.startswith("/")
                or any(ord(c) < 32 or c == "\x7f" for c in directory)):
            check.error(f"{where}.directory", "an absolute path on that machine, where fio "
                        "writes its test files (no control character)")
            continue
        user = table.get("user")
        if user is not None and (not isinstance(user, str) or not _USER.match(user)):
            check.error(f"{where}.user", f"{user!r} is not a user name")
            continue
        if start == "running" and any(k in table for k in ("user", "ssh_port")):
            check.error(where, "user and ssh_port are for start = \"ssh\"")
        if port is None:
            continue
        host = Host(name=name, address=address, port=port, start=start, directory=directory,
                    user=user, ssh_port=ssh_port)
        if start == "running":
            who = ("any local user of this machine" if is_loopback(address)
                   else "anyone who can reach that address")
            check.warn(where, f"a fio server on {address}:{port} runs any job it is sent, "
                       f"unauthenticated, as the user that started it: {who} can run jobs "
                       "there. Prefer start = \"ssh\" (the server listens on the remote's "
                       "loopback only and is reached through an SSH tunnel)")
        hosts.append(host)
    return tuple(hosts)


def read_hosts_param(raw: Any, where: str, tool: Any, hosts: tuple[Host, ...],
                     check: Checker, declared: Collection[str] = ()
                     ) -> tuple[str, ...] | str | None:
    """A test's `hosts`: "h1", ["h1", "h2"] (one case on both) or [["h1"], ["h1", "h2"]] (an
    axis). Returns the axis' values or the one value, each spelt "h1+h2"; None on a problem.
    `declared`: every name of the plan's [hosts.*], refused ones too: a test naming a host
    whose table read_hosts refused (a host named "all") has that one error, not a second
    "unknown host" besides it."""
    if tool != "fio":
        check.error(where, "only fio runs on several hosts (fio --client)")
        return None
    if isinstance(raw, list) and raw and all(isinstance(v, list) for v in raw):
        values = [_host_value(v, where, hosts, check, declared) for v in raw]
        if any(v is None for v in values):
            return None
        return tuple(v for v in values if v is not None)
    return _host_value(raw, where, hosts, check, declared)


def _host_value(raw: Any, where: str, hosts: tuple[Host, ...], check: Checker,
                declared: Collection[str] = ()) -> str | None:
    names = raw.split("+") if isinstance(raw, str) else raw
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        check.error(where, "a host name, a list of names, or a list of lists (an axis)")
        return None
    known = {h.name for h in hosts}
    unknown = [n for n in names if n not in known]
    if unknown and all(n in declared for n in unknown):
        return None  # refused where it is declared: that error is the plan's one word on it
    if unknown:
        check.error(where, f"unknown host {unknown[0]!r} (the plan's [hosts.*]: "
                    f"{', '.join(sorted(known)) or 'none'})")
        return None
    if len(set(names)) != len(names):
        check.error(where, "a host named twice: each host runs the job once")
        return None
    if len(names) > MAX_HOSTS:
        check.error(where, f"more than {MAX_HOSTS} hosts in one case")
        return None
    return "+".join(names)


def hosts_schema() -> dict[str, Any]:
    """The JSON Schema of the [hosts.*] tables (core.plan.schema puts it in the plan's)."""
    return {
        "type": "object",
        "description": "machines running fio --server, named by a fio test's `hosts`",
        "propertyNames": {"pattern": _NAME.pattern, "not": {"enum": list(RESERVED_NAMES)}},
        "additionalProperties": {
            "type": "object", "additionalProperties": False, "required": ["address"],
            "properties": {
                "address": {"type": "string", "pattern": _ADDRESS.pattern,
                            "description": "host name or IP address of the machine"},
                "port": {"type": "integer", "minimum": 1, "maximum": 65535,
                         "default": DEFAULT_PORT, "description": "the fio server's port"},
                "start": {"enum": list(STARTS), "default": "ssh",
                          "description": "ssh: DiskLab starts the server over SSH, on the "
                                         "remote's loopback, through a tunnel; running: the "
                                         "user started it (unauthenticated: see README)"},
                "directory": {"type": "string", "pattern": "^/", "default": "/tmp",
                              "description": "where fio writes on that machine"},
                "user": {"type": "string", "pattern": _USER.pattern},
                "ssh_port": {"type": "integer", "minimum": 1, "maximum": 65535},
            },
        },
    }


HOST_LIST_SCHEMA = {"type": "array", "minItems": 1, "items": {"type": "string"}}
HOSTS_PARAM_SCHEMA = {
    "anyOf": [{"type": "string"}, HOST_LIST_SCHEMA,
              {"type": "array", "minItems": 1, "items": HOST_LIST_SCHEMA}],
    "description": "fio only: the [hosts.*] the job runs on at once (fio --client), \"h1\", "
                   "[\"h1\", \"h2\"], or a list of lists (an axis: the scaling curve)",
}
