"""Custom auth written in Python (graphx.json `auth.path` naming a `langgraph_sdk.Auth`): the server asks the executor
to authenticate a request and to authorize an event; the handlers are called as the Python agent server calls them
(authenticate's parameters injected by name, `@auth.on` handlers with `ctx` and `value`)."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

if TYPE_CHECKING:
    from langgraph_sdk import Auth

# langgraph_sdk is imported where it is used, not here: importing it imports the whole SDK client (httpx, websockets,
# ~90 modules, ~3 MB), which an app without custom auth never needs (graphs.py imports ServerUser from here).


class ServerUser(dict):
    """The authenticated user as handlers and graphs read it: `user.identity` and `user["org_id"]` alike."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError as error:
            raise AttributeError(name) from error


class _Headers(dict):
    """Request headers, case-insensitive by lower-case name."""

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(name.lower(), default)

    def __getitem__(self, name: str) -> Any:
        return super().__getitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return super().__contains__(str(name).lower())


class _Url:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.path = parts.path
        self.query = parts.query
        self.scheme = parts.scheme
        self.netloc = parts.netloc
        self._url = url

    def __str__(self) -> str:
        return self._url


class Request:
    """What `authenticate(request)` gets: the request's method, URL, headers and query (a Starlette-like view)."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.method: str = params["method"]
        self.url = _Url(params["url"])
        self.headers = _Headers((name.lower(), value) for name, value in params["headers"])
        self.query_params = dict(parse_qsl(self.url.query))
        self.path_params: dict[str, str] = {}
        self._body: bytes = (params.get("body") or "").encode()

    async def body(self) -> bytes:
        return self._body


def load_auth(module: Any, name: str) -> Auth:
    from langgraph_sdk import Auth

    auth = getattr(module, name, None)
    if not isinstance(auth, Auth):
        raise TypeError(f"auth.path {name} is not a langgraph_sdk.Auth object")
    return auth


def _user_of(result: Any) -> dict[str, Any]:
    """What authenticate returned, as JSON the server normalises (a string, a dict, or an object with `identity`)."""
    if isinstance(result, str):
        return {"identity": result}
    if isinstance(result, dict):
        return dict(result)
    if hasattr(result, "identity"):
        user = {key: getattr(result, key) for key in dir(result) if not key.startswith("_")}
        return {key: value for key, value in user.items() if not callable(value)}
    raise ValueError("authenticate must return a string, a dict with an identity, or an object with an identity")


async def authenticate(auth: Auth, params: dict[str, Any]) -> dict[str, Any]:
    handler = auth._authenticate_handler
    if handler is None:
        raise LookupError("the Auth object has no authenticate handler")
    request = Request(params)
    available = {
        "request": request,
        "path": request.url.path,
        "method": request.method,
        "path_params": request.path_params,
        "query_params": request.query_params,
        "headers": {name.encode(): str(value).encode() for name, value in request.headers.items()},
        "authorization": request.headers.get("authorization"),
    }
    wanted = inspect.signature(handler).parameters
    result = handler(**{name: value for name, value in available.items() if name in wanted})
    if inspect.isawaitable(result):
        result = await result
    return _user_of(result)


def _handler_for(auth: Auth, resource: str, action: str) -> Any:
    for key in ((resource, action), (resource, "*"), ("*", action)):
        if key in auth._handlers:
            return auth._handlers[key][-1]
    return auth._global_handlers[-1] if auth._global_handlers else None


def user_object(user: dict[str, Any]) -> Any:
    if user.get("kind") == "StudioUser":
        from langgraph_sdk.auth.types import StudioUser

        return StudioUser(str(user.get("identity")), is_authenticated=True)
    return ServerUser(user)


async def authorize(auth: Auth, params: dict[str, Any]) -> dict[str, Any]:
    """`{result, value}`: the handler's filter (or False, or None) and the value as the handler left it."""
    resource, action, value = params["resource"], params["action"], params["value"]
    handler = _handler_for(auth, resource, action)
    if handler is None:
        return {"result": None, "value": value}
    from langgraph_sdk.auth.types import AuthContext

    user = params["user"]
    context = AuthContext(
        permissions=list(user.get("permissions") or []), user=user_object(user), resource=resource, action=action
    )
    result = await handler(ctx=context, value=value)
    return {"result": result, "value": value}
