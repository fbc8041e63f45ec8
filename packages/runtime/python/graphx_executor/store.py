"""The deployment's long-term store for Python graphs: LangGraph's `BaseStore` whose operations the server runs on
its own store (the one `/store/*` serves). The JS and Python PostgreSQL stores keep different tables, so one store
behind one server is what makes a graph's `store.put` visible to `/store/items` and the other way round."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any, Iterable

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from .rpc import Connection


def _op_to_js(op: Op) -> dict[str, Any]:
    if isinstance(op, GetOp):
        return {"namespace": list(op.namespace), "key": op.key}
    if isinstance(op, SearchOp):
        return {
            "namespacePrefix": list(op.namespace_prefix),
            "filter": op.filter,
            "limit": op.limit,
            "offset": op.offset,
            "query": op.query,
        }
    if isinstance(op, PutOp):
        put: dict[str, Any] = {"namespace": list(op.namespace), "key": op.key, "value": op.value}
        if op.index is False:
            put["index"] = False
        elif isinstance(op.index, list):
            put["index"] = op.index
        return put
    if isinstance(op, ListNamespacesOp):
        return {
            "matchConditions": [
                {"matchType": condition.match_type, "path": list(condition.path)}
                for condition in op.match_conditions or ()
            ],
            "maxDepth": op.max_depth,
            "limit": op.limit,
            "offset": op.offset,
        }
    raise TypeError(f"unknown store operation {type(op).__name__}")


def _time(value: str | None) -> datetime:
    return datetime.fromisoformat(value) if value else datetime.now()


def _item(raw: dict[str, Any], search: bool) -> Item:
    fields = dict(
        value=raw["value"],
        key=raw["key"],
        namespace=tuple(raw["namespace"]),
        created_at=_time(raw.get("createdAt")),
        updated_at=_time(raw.get("updatedAt")),
    )
    return SearchItem(**fields, score=raw.get("score")) if search else Item(**fields)


def _result_from_js(op: Op, raw: Any) -> Result:
    if isinstance(op, GetOp):
        return None if raw is None else _item(raw, False)
    if isinstance(op, SearchOp):
        return [_item(item, True) for item in raw or []]
    if isinstance(op, ListNamespacesOp):
        return [tuple(namespace) for namespace in raw or []]
    return None


class ServerStore(BaseStore):
    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        listed = list(ops)
        raw = await self._connection.call("store.batch", {"ops": [_op_to_js(op) for op in listed]})
        return [_result_from_js(op, result) for op, result in zip(listed, raw)]

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        # Sync nodes run in worker threads; the connection belongs to the event loop.
        loop = self._connection.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            raise RuntimeError("the synchronous store API cannot be used from async code: use `await store.aget(...)`")
        return asyncio.run_coroutine_threadsafe(self.abatch(ops), loop).result()
