"""Defers the body of two packages' `__init__` until something reads a name from the package itself.

Every Python app imports langgraph and langchain-core, and through them two package `__init__`s that import far more
than those libraries use (decisions.md "Idle RSS of a Python app"):
- `langsmith.types`: langchain-core imports `langsmith.run_trees` whether tracing is on or not, and langsmith (0.15)
  imports its generated API models package for one enum (`langsmith.types.run_select_field`); the package's
  `__init__` imports all of its ~160 modules of pydantic models (~5 MB).
- `langgraph_sdk`: langgraph's `runtime` module imports `langgraph_sdk.auth.types` for one protocol (`BaseUser`); the
  package's `__init__` imports the whole SDK client (httpx, websockets, its sync and async clients: ~90 modules,
  ~3 MB), which only an app calling `get_client()` or declaring custom auth uses.
Each package is registered with its real spec and path, so its submodules import one by one as usual; its `__init__`
runs, in the same module object, the first time a name is read from the package itself (`from langgraph_sdk import
Auth`, `langsmith.types.Run`, `import *`, `__version__`). Anything unexpected (another layout, the package already
imported) leaves the import as it is.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

DEFERRED_PACKAGES = ("langsmith.types", "langgraph_sdk")
# Dunder names that load the body when read; other dunder lookups (pickling, inspection, the import system's own
# __path__/__spec__, which the module has from its spec) must not.
_LOADING_DUNDERS = frozenset({"__all__", "__version__"})


def defer_package_init(package: str) -> bool:
    """Registers `package` with its `__init__` deferred; True when it did."""
    if package in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(package)
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
        if name.startswith("__") and name not in _LOADING_DUNDERS:
            raise AttributeError(name)
        load_body()
        if name in module.__dict__:
            return module.__dict__[name]
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    sys.modules[package] = module
    # What the import system does for a submodule it imports (find_spec imported the parent): `langsmith.types`
    # must be the package itself, not a name langsmith's own lazy `__getattr__` looks for inside it.
    parent, _, child = package.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return True


def defer_package_inits() -> list[str]:
    """Defers every package of DEFERRED_PACKAGES that can be; the names it deferred."""
    return [package for package in DEFERRED_PACKAGES if defer_package_init(package)]


__all__ = ["DEFERRED_PACKAGES", "defer_package_init", "defer_package_inits"]
