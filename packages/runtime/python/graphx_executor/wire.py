"""JSON as the agent server puts it on the wire (the Python server's own rules): pydantic models (LangChain messages)
as their `model_dump()`, named tuples as objects, exceptions as `{error, message}`, sets as lists. State snapshots
and tasks are given in the shape the Node runtime reads from LangGraph.js (`parentConfig`, `createdAt`), so one code
path formats both languages' state for the API."""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import enum
import uuid
from collections import deque
from typing import Any

import orjson
from langgraph.types import Command, Send, StateSnapshot

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _default(obj: Any) -> Any:
    if hasattr(obj, "model_dump") and callable(obj.model_dump):
        return obj.model_dump()
    if isinstance(obj, StateSnapshot):
        return snapshot_to_js(obj)
    if hasattr(obj, "_asdict") and callable(obj._asdict):
        return obj._asdict()
    if isinstance(obj, Send):
        return {"node": obj.node, "args": obj.arg}
    if isinstance(obj, Command):
        return {key: value for key, value in dataclasses.asdict(obj).items() if value is not None and value != ()}
    if isinstance(obj, BaseException):
        return {"error": type(obj).__name__, "message": str(obj)}
    if isinstance(obj, (set, frozenset, deque)):
        return list(obj)
    if isinstance(obj, datetime.timedelta):
        return obj.total_seconds()
    if isinstance(obj, decimal.Decimal):
        return float(obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (bytes, bytearray)):
        return base64.b64encode(obj).decode()
    if isinstance(obj, uuid.UUID):
        return str(obj)
    if hasattr(obj, "dict") and callable(obj.dict):
        try:
            return obj.dict()
        except Exception:  # noqa: BLE001 - a `dict` method that is not pydantic's: fall through to the text form
            pass
    if hasattr(obj, "to_json") and callable(obj.to_json):
        return obj.to_json()
    return repr(obj)


def dumps(value: Any) -> bytes:
    """Compact JSON bytes of `value` (no newline in it: one message per line)."""
    return orjson.dumps(value, default=_default, option=_OPTIONS)


def loads(data: bytes | str) -> Any:
    return orjson.loads(data)


def _task_to_js(task: Any) -> dict[str, Any]:
    state = task.state
    return {
        "id": task.id,
        "name": task.name,
        "path": list(task.path),
        "error": None if task.error is None else str(task.error),
        "interrupts": list(task.interrupts),
        "state": snapshot_to_js(state) if isinstance(state, StateSnapshot) else state,
        "result": task.result,
    }


def snapshot_to_js(snapshot: StateSnapshot) -> dict[str, Any]:
    """A StateSnapshot with LangGraph.js's field names (what the runtime's toThreadState reads)."""
    return {
        "values": snapshot.values,
        "next": list(snapshot.next),
        "tasks": [_task_to_js(task) for task in snapshot.tasks],
        "metadata": snapshot.metadata,
        "config": snapshot.config,
        "parentConfig": snapshot.parent_config,
        "createdAt": snapshot.created_at,
    }


def stream_chunk_to_js(mode: str, chunk: Any) -> Any:
    """`debug`/`checkpoints` payloads name their parent `parentConfig`, as LangGraph.js's do (debugPayloads.ts)."""
    if mode == "checkpoints" and isinstance(chunk, dict):
        return _checkpoint_to_js(chunk)
    if mode == "debug" and isinstance(chunk, dict) and chunk.get("type") == "checkpoint":
        return {**chunk, "payload": _checkpoint_to_js(chunk.get("payload"))}
    return chunk


def _checkpoint_to_js(payload: Any) -> Any:
    if not isinstance(payload, dict) or "parent_config" not in payload:
        return payload
    converted = {key: value for key, value in payload.items() if key != "parent_config"}
    converted["parentConfig"] = payload["parent_config"]
    return converted
