"""App code calling its own server: `langgraph_sdk.get_client()` made without a url talks to this agent server, as it
does inside the Python server. The SDK then builds its transport from `get_asgi_transport()` (the in-process ASGI
transport of langgraph-api, which graphx does not have); here that transport is HTTP to the agent server on loopback
with the server's loopback token, as `loopbackFetch` does for JavaScript's `new Client()` (http/loopback.ts): the
request is admitted as the app's own, and custom auth judges it like any other. The server hands the address and
token over once it listens (`set_loopback`). Patched on the pinned langgraph-sdk (requirements.txt)."""

from __future__ import annotations

from typing import Any

import httpx

LOOPBACK_HEADER = "x-graphx-loopback"
_server: dict[str, str] = {}


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


def install() -> None:
    try:
        from langgraph_sdk._async import client
    except ImportError:
        return
    client.get_asgi_transport = lambda: LoopbackTransport  # type: ignore[attr-defined]


async def set_loopback(params: dict[str, Any]) -> None:
    _server["url"] = params["url"]
    _server["token"] = params["token"]
