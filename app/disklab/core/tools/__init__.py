"""Tool adapters, one module per tool, all behind tools.base.ToolAdapter."""

from __future__ import annotations

import importlib
import importlib.util

from disklab.core.tools.base import ToolAdapter

# plan name -> (module, class). Imported lazily so that one broken adapter breaks only its tool.
_REGISTRY: dict[str, tuple[str, str]] = {
    "engine": ("disklab.core.tools.engine", "EngineAdapter"),
    "dd": ("disklab.core.tools.dd", "DdAdapter"),
    "iozone": ("disklab.core.tools.iozone", "IozoneAdapter"),
    "fio": ("disklab.core.tools.fio", "FioAdapter"),
    "bonnie": ("disklab.core.tools.bonnie", "BonnieAdapter"),
}
_cache: dict[str, ToolAdapter] = {}


def tool_names() -> list[str]:
    """Tools that have an adapter in this build."""
    names = []
    for name, (module, _cls) in _REGISTRY.items():
        if importlib.util.find_spec(module) is not None:
            names.append(name)
    return names


def get_adapter(name: str) -> ToolAdapter:
    """The adapter for a plan's `tool = NAME`; KeyError if there is none."""
    if name not in _cache:
        if name not in _REGISTRY or name not in tool_names():
            raise KeyError(name)
        module, cls = _REGISTRY[name]
        _cache[name] = getattr(importlib.import_module(module), cls)()
    return _cache[name]
