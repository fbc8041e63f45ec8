"""App code calling its own server: `langgraph_sdk.get_client()` made without a url talks to this agent server, as it
does inside the Python server. The SDK then builds its transport from `get_asgi_transport()` (the in-process ASGI
transport of langgraph-api, which graphx does not have); here that transport is HTTP to the agent server on loopback
with the server's loopback token, as `loopbackFetch` does for JavaScript's `new Client()` (http/loopback.ts): the
request is admitted as the app's own, and custom auth judges it like any other. The server hands the address and
token over once it listens (`set_loopback`). Patched on the pinned langgraph-sdk (requirements.txt)."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from typing import Any

LOOPBACK_HEADER = "x-graphx-loopback"
# The SDK module whose `get_asgi_transport` is replaced. It is patched when something imports it, not imported here:
# importing the SDK costs every Python app ~3 MB of idle memory (httpx, websockets) that most never use.
SDK_CLIENT = "langgraph_sdk._async.client"
_server: dict[str, str] = {}


def _loopback_transport() -> type:
    """Built on first use: it subclasses httpx's transport, which the SDK has imported by then."""
    import httpx

    class LoopbackTransport(httpx.AsyncHTTPTransport):
        """Takes the ASGI transport's arguments (no app is used) and sends the request to the agent server."""

        def __init__(self, app: Any = None, root_path: str = "", **kwargs: Any) -> None:
            super().__init__(retries=1)

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            if "url" not in _server:
                raise RuntimeError("get_client(): the agent server is not serving yet")
            base = httpx.URL(_server["url"])
            request.url = request.url.copy_with(scheme=base.scheme, host=base.host, port=base.port)
            request.headers["host"] = base.netloc.decode()
            request.headers[LOOPBACK_HEADER] = _server["token"]
            return await super().handle_async_request(request)

    return LoopbackTransport


def _patch(client: Any) -> None:
    transport = _loopback_transport()
    client.get_asgi_transport = lambda: transport


class _PatchingLoader(importlib.abc.Loader):
    """The SDK module's own loader, patching the module once it has run; everything else (get_source for tracebacks,
    resources) is the inner loader's."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def create_module(self, spec: Any) -> Any:
        return self._inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._inner.exec_module(module)
        _patch(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != SDK_CLIENT:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader)
        return spec


def install() -> None:
    if SDK_CLIENT in sys.modules:
        _patch(sys.modules[SDK_CLIENT])
    elif not any(isinstance(finder, _PatchOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport())


async def set_loopback(params: dict[str, Any]) -> None:
    _server["url"] = params["url"]
    _server["token"] = params["token"]
