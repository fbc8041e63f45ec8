"""Defers the body of `langsmith.types` until something reads a name from it.

langchain-core imports `langsmith.run_trees` whether tracing is on or not, and langsmith (0.15) imports its generated
API models package `langsmith.types` for one enum (`langsmith.types.run_select_field`): the package's `__init__`
imports all of its ~160 modules of pydantic models, ~5 MB of every Python app's idle memory that an app that never
calls the LangSmith API does not use (decisions.md "Idle RSS of a Python app"). The package is registered with its
real spec and path, so its submodules import one by one as usual; its `__init__` runs, in the same module object,
the first time a name is read from the package itself (or on `from langsmith.types import *`). Anything unexpected
(another langsmith layout, the package already imported) leaves the import as it is.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

PACKAGE = "langsmith.types"


def defer_langsmith_types() -> bool:
    """Registers the deferred package; True when it did."""
    if PACKAGE in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return False
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return False
    module = importlib.util.module_from_spec(spec)
    state = {"loaded": False}

    def load_body() -> None:
        if state["loaded"]:
            return
        state["loaded"] = True
        del module.__dict__["__getattr__"]
        spec.loader.exec_module(module)

    def __getattr__(name: str) -> Any:
        # Dunder lookups other than __all__ (pickling, inspection) must not load it; `import *` asks for __all__.
        if name.startswith("__") and name != "__all__":
            raise AttributeError(name)
        load_body()
        if name in module.__dict__:
            return module.__dict__[name]
        raise AttributeError(f"module {PACKAGE!r} has no attribute {name!r}")

    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    sys.modules[PACKAGE] = module
    # What the import system does for a submodule it imports (find_spec imported the parent): `langsmith.types`
    # must be the package itself, not a name langsmith's own lazy `__getattr__` looks for inside it.
    parent, _, child = PACKAGE.rpartition(".")
    setattr(sys.modules[parent], child, module)
    return True


__all__ = ["defer_langsmith_types"]
