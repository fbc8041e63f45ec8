"""JSON lines over the socket the server hands this process (a socketpair end, so nobody else can connect).

Server → executor: `{"id", "method", "params"}` requests, answered by `{"id", "result"}` or `{"id", "error"}`;
a streaming method sends `{"id", "chunk"}` lines before its answer; `{"cancel": id}` cancels a request (its answer
then is an error of type `CancelledError`, sent once the graph has stopped and its checkpoint writes have landed).
Executor → server: `{"call", "method", "params"}` (the long-term store), answered by `{"reply", "result"|"error"}`.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import socket
import sys
import traceback
from typing import Any, AsyncIterator, Awaitable, Callable

from . import wire

log = logging.getLogger("graphx_executor")

Handler = Callable[[dict[str, Any]], Awaitable[Any] | AsyncIterator[Any]]

# A line may carry a whole state: 256 MiB is well past what a request body may be.
LINE_LIMIT = 256 * 1024 * 1024


class RemoteError(Exception):
    """The server answered a call with an error."""


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._tasks: dict[Any, asyncio.Task[None]] = {}
        self._calls: dict[int, asyncio.Future[Any]] = {}
        self._call_ids = itertools.count(1)
        self.loop = asyncio.get_running_loop()

    @classmethod
    async def from_fd(cls, fd: int) -> "Connection":
        sock = socket.socket(fileno=fd)
        reader, writer = await asyncio.open_connection(sock=sock, limit=LINE_LIMIT)
        return cls(reader, writer)

    def send(self, message: dict[str, Any]) -> None:
        self._writer.write(wire.dumps(message) + b"\n")

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        """Calls the server (from the event loop)."""
        call_id = next(self._call_ids)
        future: asyncio.Future[Any] = self.loop.create_future()
        self._calls[call_id] = future
        self.send({"call": call_id, "method": method, "params": params})
        await self._writer.drain()
        return await future

    async def serve(self, handlers: dict[str, Handler]) -> None:
        """Reads requests until the server closes the socket (then this process ends)."""
        while True:
            line = await self._reader.readline()
            if not line:
                break
            message = wire.loads(line)
            if "reply" in message:
                future = self._calls.pop(message["reply"], None)
                if future and not future.done():
                    if "error" in message:
                        future.set_exception(RemoteError(message["error"].get("message", "error")))
                    else:
                        future.set_result(message.get("result"))
                continue
            if "cancel" in message:
                task = self._tasks.get(message["cancel"])
                if task:
                    task.cancel()
                continue
            request_id = message["id"]
            handler = handlers.get(message.get("method", ""))
            task = asyncio.create_task(self._answer(request_id, handler, message.get("params") or {}))
            task.add_done_callback(functools.partial(self._answer_unstarted, request_id))
            self._tasks[request_id] = task
        for task in list(self._tasks.values()):
            task.cancel()

    def _answer_unstarted(self, request_id: Any, task: asyncio.Task[None]) -> None:
        """Answers a request cancelled before its task took its first step. Its coroutine never ran, so neither the
        `except CancelledError` nor the `finally` of `_answer` did: without this the server would wait for the answer
        forever. The server sends `{cancel}` right behind a request whose caller had already given up (a run stopped
        the moment it started), and both lines are read before the task is first scheduled."""
        if not task.cancelled():
            return
        self._tasks.pop(request_id, None)
        self.send({"id": request_id, "error": {"type": "CancelledError", "message": "cancelled"}})

    async def _answer(self, request_id: Any, handler: Handler | None, params: dict[str, Any]) -> None:
        try:
            if handler is None:
                raise LookupError("unknown method")
            outcome = handler(params)
            if hasattr(outcome, "__aiter__"):
                async for chunk in outcome:  # type: ignore[union-attr]
                    self.send({"id": request_id, "chunk": chunk})
                    await self._writer.drain()
                result = None
            else:
                result = await outcome  # type: ignore[misc]
            self.send({"id": request_id, "result": result})
        except asyncio.CancelledError:
            self.send({"id": request_id, "error": {"type": "CancelledError", "message": "cancelled"}})
        except BaseException as error:  # noqa: BLE001 - every failure of a graph is the caller's answer
            if not isinstance(error, Exception):
                raise
            log.debug("request %s failed: %s", request_id, "".join(traceback.format_exception(error)))
            self.send({"id": request_id, "error": error_payload(error)})
        finally:
            self._tasks.pop(request_id, None)
        try:
            await self._writer.drain()
        except ConnectionError:
            sys.exit(0)


def error_payload(error: BaseException) -> dict[str, Any]:
    """`{type, message}` as the API's error event carries it; an HTTPException keeps status, detail and headers."""
    payload: dict[str, Any] = {"type": type(error).__name__, "message": str(error)}
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        payload["status_code"] = status
        payload["detail"] = getattr(error, "detail", None)
        headers = getattr(error, "headers", None)
        if headers:
            payload["headers"] = dict(headers)
    return payload
