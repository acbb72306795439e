"""Tool adapters, one module (or package) per tool, all behind tools.base.ToolAdapter.

Each module of this package but `base` is a tool of that name and names its adapter class
`ADAPTER`; the adapter is the one home of the tool's facts (its parameters, its Capabilities:
placeable, raw-device capable, importable; its Debian package; its rank in lists). Everything
else that asks about tools (the plan's checks and schema, `disklab import` and its `--tool`
choices, `disklab tools`, the window) asks here, so adding a tool is adding its module.

The registry loads an adapter the first time it is asked for, and checks it against the
interface then: a module that lacks a member fails with the adapter and the member named, at
load, rather than with an AttributeError in the middle of a session.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator, Mapping

from disklab.core.tools.base import Capabilities, ParamSpec, ToolAdapter
from disklab.core.vocab.errors import AdapterError

_NOT_TOOLS = frozenset({"base"})  # modules of this package that are no tool
_cache: dict[str, ToolAdapter] = {}

# The interface: what the runner, the plan loader, `disklab import` and the GUI call.
_TEXT_ATTRIBUTES = ("name", "title", "executable", "package")
_METHODS = ("version_argv", "parse_version", "check", "is_buffered", "reads", "file_size",
            "uses_direct_io", "build_command", "parse_result", "parse_partial",
            "progress_parser", "sniff", "saved_output", "builtin_version")


def _modules() -> list[str]:
    """The tool modules of this package as they are on disk now (listed again at each call:
    a directory listing, and a module added to the package's path is a tool at once)."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__)
                  if m.name not in _NOT_TOOLS and not m.name.startswith("_"))


def tool_names() -> list[str]:
    """Tools that have an adapter in this build, by their rank (the built-in engine first)."""
    return sorted(_modules(), key=lambda name: (get_adapter(name).rank, name))


def placeable_tools() -> list[str]:
    """Tools whose streams a test's `on` spreads over several targets."""
    return [n for n in tool_names() if get_adapter(n).capabilities.placeable]


def raw_tools() -> list[str]:
    """Tools that work on a block device without a filesystem (`raw = true`, device targets)."""
    return [n for n in tool_names() if get_adapter(n).capabilities.raw_device]


class ToolsWith:
    """The tools with one capability, asked of the registry at each use (`name in it`, a loop):
    a container for code that tests membership, always as the adapters say."""

    def __init__(self, fact: str) -> None:
        self.fact = fact

    def _names(self) -> list[str]:
        return [n for n in tool_names() if getattr(get_adapter(n).capabilities, self.fact)]

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


def importable_tools() -> list[str]:
    """Tools whose saved outputs `disklab import` reads, in the order it sniffs them."""
    return [n for n in tool_names() if get_adapter(n).capabilities.importable]


def get_adapter(name: str) -> ToolAdapter:
    """The adapter for a plan's `tool = NAME`; KeyError if there is none, AdapterError if its
    module does not implement the interface."""
    if name not in _cache:
        if name not in _modules():
            raise KeyError(name)
        _cache[name] = load_adapter(name, f"{__name__}.{name}", "ADAPTER")
    return _cache[name]


def load_adapter(name: str, module: str, cls: str) -> ToolAdapter:
    """Import `module`, check its class `cls` against the adapter interface, and make one."""
    where = f"tool adapter {name!r} ({module}.{cls})"
    adapter_class = getattr(importlib.import_module(module), cls, None)
    if not isinstance(adapter_class, type) or not issubclass(adapter_class, ToolAdapter):
        raise AdapterError(f"{where}: no ToolAdapter subclass named {cls} in {module}")
    problems = interface_problems(name, adapter_class)
    if problems:
        raise AdapterError(f"{where} does not implement the adapter interface: "
                           + "; ".join(problems))
    return adapter_class()


def interface_problems(name: str, adapter_class: type[ToolAdapter]) -> list[str]:
    """What `adapter_class` lacks or gets wrong, one phrase each (empty when it is complete)."""
    problems = []
    for attr in _TEXT_ATTRIBUTES:
        value = getattr(adapter_class, attr, None)
        if value is None:
            problems.append(f"missing {attr}")
        elif not isinstance(value, str):
            problems.append(f"{attr} is {type(value).__name__}, not str")
    registered = getattr(adapter_class, "name", None)
    if isinstance(registered, str) and registered != name:
        problems.append(f"name is {registered!r} but it is registered as {name!r}")
    capabilities = getattr(adapter_class, "capabilities", None)
    if capabilities is None:
        problems.append("missing capabilities")
    elif not isinstance(capabilities, Capabilities):
        problems.append(f"capabilities is {type(capabilities).__name__}, not Capabilities")
    params = getattr(adapter_class, "params", None)
    if params is None:
        problems.append("missing params")
    elif not isinstance(params, Mapping) or not all(
            isinstance(spec, ParamSpec) for spec in params.values()):
        problems.append("params is not a mapping of name -> ParamSpec")
    elif ("direct" in params and isinstance(capabilities, Capabilities)
          and not capabilities.direct_io):
        problems.append("has a `direct` parameter but capabilities.direct_io is False")
    for method in _METHODS:
        if not callable(getattr(adapter_class, method, None)):
            problems.append(f"missing method {method}()")
    if inspect.isabstract(adapter_class):
        problems.extend(f"abstract method {m}() not implemented"
                        for m in sorted(adapter_class.__abstractmethods__))
    return problems
