"""Tool adapters, one module per tool, all behind tools.base.ToolAdapter.

The registry loads an adapter the first time a plan names its tool, and checks it against the
interface then: a module that lacks a member fails with the adapter and the member named, at
load, rather than with an AttributeError in the middle of a session.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping

from disklab.core.errors import AdapterError
from disklab.core.tools.base import Capabilities, ParamSpec, ToolAdapter

# plan name -> (module, class). Imported when first used, so that `disklab tools` and a plan
# load only the adapters they need.
_REGISTRY: dict[str, tuple[str, str]] = {
    "engine": ("disklab.core.tools.engine", "EngineAdapter"),
    "dd": ("disklab.core.tools.dd", "DdAdapter"),
    "iozone": ("disklab.core.tools.iozone", "IozoneAdapter"),
    "fio": ("disklab.core.tools.fio", "FioAdapter"),
    "bonnie": ("disklab.core.tools.bonnie", "BonnieAdapter"),
    "tree": ("disklab.core.tools.tree", "TreeAdapter"),
}
_cache: dict[str, ToolAdapter] = {}

# The interface: what the runner, the plan loader, `disklab import` and the GUI call.
_TEXT_ATTRIBUTES = ("name", "title", "executable", "package")
_METHODS = ("version_argv", "parse_version", "check", "is_buffered", "reads", "file_size",
            "uses_direct_io", "build_command", "parse_result", "parse_partial",
            "progress_parser", "sniff")


def tool_names() -> list[str]:
    """Tools that have an adapter in this build."""
    return list(_REGISTRY)


def get_adapter(name: str) -> ToolAdapter:
    """The adapter for a plan's `tool = NAME`; KeyError if there is none, AdapterError if its
    module does not implement the interface."""
    if name not in _cache:
        module, cls = _REGISTRY[name]
        _cache[name] = load_adapter(name, module, cls)
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
