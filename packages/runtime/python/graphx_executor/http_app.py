"""graphx.json `http.app` naming a Python ASGI app (Starlette, FastAPI): the agent server hands it, over the RPC, each
request it may take. A Starlette app's own router decides (a route matching path and method takes the request; none
matching means "not mine" and the server's API answers, as the Python server merges the app's routes in front of its
own; a route matching the path for another method answers, with its 405, only when the API has nothing either); any other ASGI callable is asked, and a 404 from it means "not mine". Its lifespan runs from load to close.

A request is one streaming call: the answer's start (`{"status", "headers"}`, or `{"pass": true}`) then its body in
chunks (`{"body": base64}`) as the app sends them, so a StreamingResponse / SSE endpoint reaches the client as it goes.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import urllib.parse
from typing import Any, AsyncIterator

from .graphs import load_app_module

log = logging.getLogger("graphx_executor")


def _routes_of(app: Any) -> list[Any] | None:
    router = getattr(app, "router", None)
    routes = getattr(router, "routes", None)
    return routes if isinstance(routes, list) else None


def _match(app: Any, scope: dict[str, Any]) -> str | None:
    """How a Starlette app's routes match: "full" (path and method), "partial" (a path, another method), "none";
    None when the app has no router."""
    routes = _routes_of(app)
    if routes is None:
        return None
    from starlette.routing import Match

    best = "none"
    for route in routes:
        match, _ = route.matches(scope)
        if match == Match.FULL:
            return "full"
        if match == Match.PARTIAL:
            best = "partial"
    return best


def route_table(app: Any) -> list[dict[str, Any]] | None:
    """The app's HTTP routes as (pattern, methods) for the agent server to match API requests against without a call
    here: Starlette's own `path_regex` (Python syntax; the server translates the named groups) and methods (None: any,
    as a Mount). None — ask for every request — when the app has no router or a route decides in code of its own
    (a `matches` other than Starlette's or FastAPI's, a Host, a custom BaseRoute)."""
    routes = _routes_of(app)
    if routes is None:
        return None
    from starlette.routing import Mount, Route, WebSocketRoute

    known = {Route.matches, Mount.matches}
    try:
        from fastapi.routing import APIRoute

        known.add(APIRoute.matches)
    except ImportError:
        pass
    table: list[dict[str, Any]] = []
    for route in routes:
        if isinstance(route, WebSocketRoute) and type(route).matches is WebSocketRoute.matches:
            continue  # never matches an HTTP request
        if not isinstance(route, (Route, Mount)) or type(route).matches not in known:
            return None
        methods = sorted(route.methods) if isinstance(route, Route) and route.methods else None
        table.append({"pattern": route.path_regex.pattern, "methods": methods})
    return table


def _openapi_of(app: Any) -> dict[str, Any] | None:
    """A FastAPI app's own OpenAPI document (its `openapi()`), for the server's /openapi.json to list the app's routes
    as the Python server's does; None for an app without one, or whose schema cannot be made (logged, not fatal)."""
    make = getattr(app, "openapi", None)
    if not callable(make):
        return None
    try:
        document = make()
    except Exception:  # noqa: BLE001 - a schema the app cannot build must not stop the app from serving
        log.warning("http.app: its OpenAPI document could not be made; /openapi.json lists the API only", exc_info=True)
        return None
    return document if isinstance(document, dict) else None


class Lifespan:
    """The ASGI lifespan protocol: startup at load, shutdown at close; an app that does not speak it is left alone."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.state: dict[str, Any] = {}
        self._inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": self.state}
        try:
            await self.app(scope, self._inbox.get, self._outbox.put)
        except BaseException as error:  # noqa: BLE001 - an app without lifespan support raises on its scope
            log.debug("http.app has no lifespan: %r", error)
        finally:
            # Also what an app that returns without a word about its lifespan answers: nothing to wait for.
            await self._outbox.put({"type": "graphx.lifespan.ended"})

    async def startup(self) -> None:
        self._task = asyncio.create_task(self._run())
        await self._inbox.put({"type": "lifespan.startup"})
        answer = await self._outbox.get()
        if answer["type"] == "lifespan.startup.failed":
            raise RuntimeError(f"the app's lifespan startup failed: {answer.get('message', '')}")
        if answer["type"] != "lifespan.startup.complete":
            self._task = None

    async def shutdown(self) -> None:
        if self._task is None or self._task.done():
            return
        await self._inbox.put({"type": "lifespan.shutdown"})
        try:
            await asyncio.wait_for(self._outbox.get(), timeout=10)
        except asyncio.TimeoutError:
            self._task.cancel()


class HttpApp:
    def __init__(self) -> None:
        self.app: Any = None
        self.lifespan: Lifespan | None = None

    async def load(self, params: dict[str, Any]) -> dict[str, Any]:
        spec = params["app"]
        where = spec.get("module") or spec.get("file")
        app = getattr(load_app_module(params["app_dir"], spec), spec["exportName"], None)
        if app is None or not callable(app):
            raise TypeError(f"{where}:{spec['exportName']} is not an ASGI app (a Starlette or FastAPI app)")
        self.app = app
        self.lifespan = Lifespan(app)
        await self.lifespan.startup()
        return {"routes": _routes_of(app) is not None, "table": route_table(app), "openapi": _openapi_of(app)}

    async def close(self) -> None:
        if self.lifespan:
            await self.lifespan.shutdown()

    async def request(self, params: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        raw_path: str = params["path"]  # as sent; ASGI's `path` is percent-decoded
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": params["method"],
            "scheme": params.get("scheme", "http"),
            "path": urllib.parse.unquote(raw_path),
            "raw_path": raw_path.encode(),
            "query_string": params.get("query", "").encode(),
            "root_path": "",
            "headers": [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in params["headers"]],
            "client": (params.get("client") or "127.0.0.1", 0),
            "server": None,
            "state": dict(self.lifespan.state) if self.lifespan else {},
        }
        match = _match(self.app, scope)
        # A near miss is the API's first; only if nothing of the API answers does the app's route (its 405).
        if match == "none" or (match == "partial" and not params.get("force")):
            yield {"pass": True, "partial": match == "partial"}
            return
        body: bytes = (params.get("body") or "").encode()
        messages: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        disconnected = asyncio.Event()
        sent_body = False

        async def receive() -> dict[str, Any]:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def run() -> None:
            try:
                await self.app(scope, receive, messages.put)
            finally:
                await messages.put(None)

        task = asyncio.create_task(run())
        started = complete = False
        try:
            while True:
                message = await messages.get()
                if message is None:
                    await task  # the app returned (or raised) without finishing a response
                    break
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                    if match is None and status == 404:
                        yield {"pass": True}
                        return
                    started = True
                    headers = [[name.decode("latin-1"), value.decode("latin-1")] for name, value in message.get("headers", [])]
                    yield {"status": status, "headers": headers}
                elif message["type"] == "http.response.body" and started:
                    chunk = message.get("body", b"")
                    if chunk:
                        yield {"body": base64.b64encode(chunk).decode()}
                    if not message.get("more_body", False):
                        # Background tasks run on after the response, as under uvicorn; the client has its answer.
                        complete = True
                        break
        except Exception:
            if not started:
                raise
            # Starlette has answered 500 already when it can; once a response has begun, it just ends.
            log.exception("http.app failed after its response started")
        finally:
            if not complete:
                disconnected.set()
                if not task.done():
                    task.cancel()
