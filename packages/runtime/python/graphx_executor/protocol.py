"""Protocol v2 events of a Python graph (`astream_events(version="v3")`) in the shapes LangGraph.js's
`streamEvents(…, {version: "v3"})` gives them, so the runtime's one reader (execution/protocolFrames.ts) makes the
same frames for both languages and the JavaScript path does no extra work. What differs between the two libraries'
events, and what is done here (docs/decisions.md, "Protocol v2 for Python graphs"):

- `messages`: Python's data are `(event, metadata)`; JS's the event with the chat model's `run_id`, and the node
  beside it (`params.node`). A message a node returned whole (no token stream) is replayed as its events, as
  LangGraph.js's handler does; LangChain's legacy token chunks are not protocol events and are left out.
- `values` at an interrupt: Python keeps the interrupts in `params.interrupts` beside the state; JS gives only
  `{"__interrupt__": [...]}` (the runtime turns it into `input.requested` and sends no values).
- `updates`: Python's `{node: values}`; JS's `{node, values}` with the node in `params.node`.
- `lifecycle` of a subgraph: Python forwards it at the root with the subgraph's namespace inside the data; JS puts
  it in `params.namespace`.
- `custom`: JS wraps a payload that is not `{name, …}` as `{payload}`.
- `checkpoints`: JS sends an envelope `{id, parent_id, step, source}` before each step's values; Python's
  `checkpoints` mode gives the whole snapshot after them (and one for the input), from which the envelope is made
  and put first.
- `updates`, `custom`, `checkpoints` and `tools` are streamed only when a transformer asks for them (`_MoreModes`);
  `tools` events are already the protocol's (`tool-started`, …) in both.

- `tasks`: Python's lifecycle transformer takes them out of the main log; they are put back where they were.

Kept as Python's LangGraph gives them (and so as the Python Agent Server would): a node's tokens and tool events in
the namespace of the graph that runs the node (LangGraph.js puts them in the node's task namespace `node:<task id>`,
with a lifecycle of its own).
"""

from __future__ import annotations

import warnings
from collections import deque
from typing import Any, AsyncIterator, Iterator

from langchain_core.language_models._compat_bridge import message_to_events
from langchain_core.messages import AIMessageChunk, BaseMessage, ToolMessage
from langgraph.pregel import Pregel
from langgraph.stream._types import StreamTransformer


# The server chose the v3 stream, not the app: its "experimental" warning is no news for the app's log.
warnings.filterwarnings("ignore", message="The v3 streaming protocol on Pregel is experimental")


class _MoreModes(StreamTransformer):
    """Asks the graph for the modes LangGraph.js's v3 streams beyond Python's defaults (values, messages, tasks):
    v3 streams only the modes its transformers require. Their events stay in the main log and are converted below
    (LangGraph's own transformers for these modes would also keep them in projections nobody reads). Python's
    lifecycle transformer takes `tasks` events out of the main log; the root's copy of this one sets them aside in
    `tasks`, to be sent where they were: the main log is pumped only when empty, so a task event set aside comes
    before the next event read from it."""

    required_stream_modes = ("updates", "custom", "checkpoints", "tools")

    def __init__(self, scope: tuple[str, ...], tasks: deque[dict[str, Any]]) -> None:
        super().__init__(scope)
        self._tasks = tasks if scope == () else None  # subgraph handles' muxes see the same events again

    def init(self) -> dict[str, Any]:
        return {}

    def process(self, event: Any) -> bool:
        if self._tasks is not None and event["method"] == "tasks":
            self._tasks.append(event)
        return True


async def protocol_events(
    graph: Pregel, graph_input: Any, config: dict[str, Any], **kwargs: Any
) -> AsyncIterator[dict[str, Any]]:
    """The run's protocol events (`{method, params}`) in LangGraph.js's shapes."""
    tasks: deque[dict[str, Any]] = deque()
    transformers = [lambda scope: _MoreModes(scope, tasks)]
    run = await graph.astream_events(graph_input, config, version="v3", transformers=transformers, **kwargs)
    # A step's values wait for the checkpoint Python emits right after them (in the same tick), so the checkpoint
    # comes first, as in LangGraph.js; without a checkpointer there is none to wait for.
    pairs = graph.checkpointer not in (None, False)
    held: dict[str, Any] | None = None
    graph_names: dict[tuple, str] = {}
    async with run:
        async for event in _with_tasks(run, tasks):
            for converted in _convert(event["method"], event["params"], graph_names):
                if held is not None:
                    namespace = converted["params"]["namespace"]
                    if converted["method"] == "checkpoints" and namespace == held["params"]["namespace"]:
                        yield converted
                        yield held
                        held = None
                        continue
                    yield held
                    held = None
                if pairs and converted["method"] == "values" and not _at_interrupt(converted["params"]["data"]):
                    held = converted
                else:
                    yield converted
        if held is not None:
            yield held


async def _with_tasks(run: AsyncIterator[dict[str, Any]], tasks: deque[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    """The main log's events with the task events set aside (`_MoreModes`) put back before the event read after them."""
    async for event in run:
        while tasks:
            yield tasks.popleft()
        yield event
    while tasks:
        yield tasks.popleft()


def _event(method: str, namespace: list[str], timestamp: int, data: Any, node: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"namespace": namespace, "timestamp": timestamp}
    if node is not None:
        params["node"] = node
    params["data"] = data
    return {"type": "event", "method": method, "params": params}


def _at_interrupt(values: Any) -> bool:
    return isinstance(values, dict) and "__interrupt__" in values


def _interrupt(item: Any) -> dict[str, Any]:
    return {"id": getattr(item, "id", None), "value": getattr(item, "value", item)}


def _convert(method: str, params: dict[str, Any], graph_names: dict[tuple, str]) -> Iterator[dict[str, Any]]:
    namespace, timestamp, data = list(params["namespace"]), params["timestamp"], params["data"]
    if method == "messages":
        yield from _messages(namespace, timestamp, data)
    elif method == "values":
        interrupts = params.get("interrupts") or ()
        if interrupts:
            data = {"__interrupt__": [_interrupt(item) for item in interrupts]}
        yield _event("values", namespace, timestamp, data)
    elif method == "updates":
        for node, values in (data or {}).items():
            if node == "__interrupt__":
                values = [_interrupt(item) for item in values]
            elif not isinstance(values, (dict, list)):
                values = {"value": values}
            yield _event("updates", namespace, timestamp, {"node": node, "values": values}, node)
    elif method == "lifecycle" and isinstance(data, dict) and "namespace" in data:
        inner = {key: value for key, value in data.items() if key != "namespace"}
        subgraph = tuple(data["namespace"])
        if "graph_name" in inner:
            graph_names[subgraph] = inner["graph_name"]
        elif subgraph in graph_names:  # Python names the graph when it starts; JS at every lifecycle event
            inner["graph_name"] = graph_names[subgraph]
        yield _event("lifecycle", list(subgraph), timestamp, inner)
    elif method == "custom":
        wrapped = data if isinstance(data, dict) and "name" in data else {"payload": data}
        yield _event("custom", namespace, timestamp, wrapped)
    elif method == "checkpoints":
        # The input's checkpoint has no values of its own: JS sends none.
        if isinstance(data, dict) and (data.get("metadata") or {}).get("source") != "input":
            yield _event("checkpoints", namespace, timestamp, _envelope(data))
    else:
        yield _event(method, namespace, timestamp, data, params.get("node"))


def _messages(namespace: list[str], timestamp: int, data: Any) -> Iterator[dict[str, Any]]:
    payload, metadata = data
    metadata = metadata or {}
    node = metadata.get("langgraph_node")
    run_id = metadata.get("run_id")
    if isinstance(payload, dict) and "event" in payload:
        events: Any = [payload]
    elif isinstance(payload, BaseMessage) and not isinstance(payload, (AIMessageChunk, ToolMessage)):
        events = message_to_events(payload, message_id=payload.id)
    else:
        return
    for item in events:
        event = dict(item)
        if run_id is not None:
            event["run_id"] = str(run_id)
        yield _event("messages", namespace, timestamp, event, node)


def _envelope(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A `checkpoints` snapshot as LangGraph.js's v3 envelope: `{id, parent_id, step, source}`."""
    configurable = (snapshot.get("config") or {}).get("configurable") or {}
    parent = ((snapshot.get("parent_config") or {}).get("configurable") or {}).get("checkpoint_id")
    metadata = snapshot.get("metadata") or {}
    envelope: dict[str, Any] = {"id": configurable.get("checkpoint_id")}
    if parent is not None:
        envelope["parent_id"] = parent
    envelope["step"] = metadata.get("step")
    envelope["source"] = metadata.get("source")
    return envelope
