"""The application's graphs (graphx.json `path.py:variable` or `package.module:variable`) and what the server asks of
them: runs (stream), state, history, updates, drawings and schemas. A variable may be a compiled graph, an
uncompiled StateGraph, or a factory called per run with the run's config (sync or async)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from types import ModuleType
from typing import Any, AsyncIterator

from langchain_core.messages import messages_from_dict
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from langgraph.store.base import BaseStore
from langgraph.types import Command, Send, StateUpdate

from .auth import ServerUser
from .protocol import protocol_events
from .wire import snapshot_to_js, stream_chunk_to_js

_modules: dict[str, ModuleType] = {}


def load_module(app_dir: str, spec: dict[str, Any]) -> ModuleType:
    """A file is loaded once however many graphs name it; a dotted module is imported as Python would."""
    if app_dir not in sys.path:
        sys.path.insert(0, app_dir)
    if spec.get("module"):
        return importlib.import_module(spec["module"])
    file = os.path.realpath(spec["file"])
    if file in _modules:
        return _modules[file]
    relative = os.path.relpath(file, app_dir)
    name = "graphx_app_" + "".join(char if char.isalnum() else "_" for char in relative[:-3])
    module_spec = importlib.util.spec_from_file_location(name, file)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot load {file}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    _modules[file] = module
    return module


def load_app_module(app_dir: str, spec: dict[str, Any]) -> ModuleType:
    """The module an app's graphx.json names (its auth, its http.app); a failure names it."""
    try:
        return load_module(app_dir, spec)
    except Exception as error:
        where = spec.get("module") or spec.get("file")
        raise ImportError(f"Cannot load {where}: {type(error).__name__}: {error}") from error


def _compiled(value: Any, graph_id: str) -> Pregel:
    if isinstance(value, Pregel):
        return value
    if hasattr(value, "compile") and callable(value.compile):
        return _compiled(value.compile(), graph_id)
    raise TypeError(f"Graph {graph_id} is neither a compiled graph, a StateGraph nor a factory")


def _py_config(config: dict[str, Any] | None) -> dict[str, Any]:
    """The server's config (LangGraph.js names) as LangGraph's."""
    if not config:
        return {}
    converted = {key: value for key, value in config.items() if key not in ("recursionLimit", "context", "signal")}
    configurable = config.get("configurable")
    if isinstance(configurable, dict) and any(key.endswith("_auth_user") for key in configurable):
        # Graphs read the user as the Python server gives it: `user.identity` and `user["org_id"]` alike.
        converted["configurable"] = {
            key: ServerUser(value) if key.endswith("_auth_user") and isinstance(value, dict) else value
            for key, value in configurable.items()
        }
    if "recursionLimit" in config:
        converted["recursion_limit"] = config["recursionLimit"]
    return converted


def _command(fields: dict[str, Any]) -> Command:
    """The API's `command` (`goto` Sends in the `{node, input}` form) as LangGraph's Command."""

    def target(goto: Any) -> Any:
        if isinstance(goto, dict) and "node" in goto:
            return Send(goto["node"], goto.get("input"))
        return goto

    goto = fields.get("goto")
    kwargs: dict[str, Any] = {}
    if "resume" in fields and fields["resume"] is not None:
        kwargs["resume"] = fields["resume"]
    if fields.get("update") is not None:
        update = fields["update"]
        kwargs["update"] = [tuple(item) for item in update] if isinstance(update, list) else update
    if goto is not None:
        kwargs["goto"] = [target(item) for item in goto] if isinstance(goto, list) else target(goto)
    return Command(**kwargs)


_MESSAGE_TYPES = {"human", "ai", "system", "tool", "function", "chat", "remove"}


def _as_message(value: Any) -> Any:
    """A message as the wire shows it (`{type, content, ...}`) becomes the message it was, every field kept (a
    reducer's own conversion would file unknown fields such as `usage_metadata` under `additional_kwargs`)."""
    if isinstance(value, dict) and value.get("type") in _MESSAGE_TYPES and "content" in value:
        data = {key: item for key, item in value.items() if key != "type"}
        try:
            return messages_from_dict([{"type": value["type"], "data": data}])[0]
        except Exception:  # noqa: BLE001 - not a message after all: the graph gets the dict as sent
            return value
    return value


def _with_messages(values: Any) -> Any:
    if isinstance(values, list):
        return [_as_message(item) for item in values]
    if isinstance(values, dict):
        return {key: _with_messages(item) if isinstance(item, list) else _as_message(item) for key, item in values.items()}
    return values


def _input(params: dict[str, Any]) -> Any:
    if params.get("command") is not None:
        return _command(params["command"])
    return _with_messages(params.get("input"))


def _run_options(params: dict[str, Any]) -> dict[str, Any]:
    """A run's interrupt points, durability (stateful runs only) and context, as `astream` takes them."""
    options: dict[str, Any] = {}
    for key in ("interrupt_before", "interrupt_after", "durability"):
        if params.get(key) is not None:
            options[key] = params[key]
    if not params.get("stateful"):
        options.pop("durability", None)
    context = (params.get("config") or {}).get("context")
    if context is not None:
        options["context"] = context
    return options


def _values(value: Any) -> Any:
    if isinstance(value, dict) and "__command__" in value:
        return _command(value["__command__"])
    return _with_messages(value)


class LoadedGraph:
    def __init__(self, graph_id: str, exported: Any) -> None:
        self.graph_id = graph_id
        self._factory = None
        self._compiled: Pregel | None = None
        if callable(exported) and not isinstance(exported, Pregel) and not hasattr(exported, "compile"):
            self._factory = exported
        else:
            self._compiled = _compiled(exported, graph_id)

    @property
    def kind(self) -> str:
        return "factory" if self._factory else "graph"

    async def build(self, config: dict[str, Any]) -> Pregel:
        if self._compiled is not None:
            return self._compiled
        assert self._factory is not None
        takes_config = len(inspect.signature(self._factory).parameters) > 0
        built = self._factory(config) if takes_config else self._factory()
        if inspect.isawaitable(built):
            built = await built
        return _compiled(built, self.graph_id)


class Graphs:
    def __init__(self, checkpointer: BaseCheckpointSaver, store: BaseStore) -> None:
        self._checkpointer = checkpointer
        self._store = store
        self._graphs: dict[str, LoadedGraph] = {}

    def load(self, app_dir: str, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if app_dir not in sys.path:
            sys.path.insert(0, app_dir)
        loaded = []
        for spec in specs:
            where = spec.get("module") or spec.get("file")
            try:
                module = load_module(app_dir, spec)
            except Exception as error:
                raise ImportError(f"Cannot load {where}: {type(error).__name__}: {error}") from error
            if not hasattr(module, spec["exportName"]):
                raise ImportError(f"{where} has no variable named {spec['exportName']}")
            graph = LoadedGraph(spec["graphId"], getattr(module, spec["exportName"]))
            self._graphs[spec["graphId"]] = graph
            loaded.append({"graphId": spec["graphId"], "kind": graph.kind})
        return loaded

    async def _graph(self, params: dict[str, Any], stateful: bool = True) -> tuple[Pregel, dict[str, Any]]:
        graph = self._graphs.get(params["graph_id"])
        if graph is None:
            raise LookupError(f"no Python graph {params['graph_id']}")
        config = _py_config(params.get("config"))
        compiled = await graph.build(config)
        update: dict[str, Any] = {"store": self._store, "checkpointer": self._checkpointer if stateful else None}
        return compiled.copy(update=update), config

    async def stream(self, params: dict[str, Any]) -> AsyncIterator[Any]:
        graph, config = await self._graph(params, bool(params.get("stateful")))
        subgraphs = bool(params.get("subgraphs"))
        kwargs: dict[str, Any] = {"stream_mode": params["stream_mode"], "subgraphs": True, **_run_options(params)}
        async for namespace, mode, chunk in graph.astream(_input(params), config, **kwargs):
            if namespace and not subgraphs:
                continue
            yield [list(namespace), mode, stream_chunk_to_js(mode, chunk)]

    async def stream_events(self, params: dict[str, Any]) -> AsyncIterator[Any]:
        """The `events` mode: every callback event, and the root run's own stream chunks told apart (`chunk`); with
        `version: "v3"`, LangGraph's protocol-v2 events (`protocol`) in the shapes LangGraph.js's streamEvents v3 gives
        them (protocol.py)."""
        graph, config = await self._graph(params, bool(params.get("stateful")))
        if params.get("version") == "v3":
            run_config = {**config, "run_id": params["run_id"]}
            async for event in protocol_events(graph, _input(params), run_config, **_run_options(params)):
                yield {"protocol": event}
            return
        run_id = params["run_id"]
        config = {**config, "run_id": run_id}
        kwargs: dict[str, Any] = {"stream_mode": params["stream_mode"], "subgraphs": bool(params.get("subgraphs"))}
        for key in ("interrupt_before", "interrupt_after"):
            if params.get(key) is not None:
                kwargs[key] = params[key]
        async for event in graph.astream_events(_input(params), config, version="v2", **kwargs):
            if "langsmith:hidden" in (event.get("tags") or []):
                continue
            if event.get("event") == "on_chain_stream" and str(event.get("run_id")) == run_id:
                chunk = event.get("data", {}).get("chunk")
                if kwargs["subgraphs"]:
                    namespace, mode, data = chunk
                else:
                    namespace, (mode, data) = (), chunk
                yield {"chunk": [list(namespace), mode, stream_chunk_to_js(mode, data)]}
            else:
                yield {"event": event}

    async def get_state(self, params: dict[str, Any]) -> Any:
        graph, config = await self._graph(params)
        snapshot = await graph.aget_state(_py_config(params["state_config"]), subgraphs=bool(params.get("subgraphs")))
        return snapshot_to_js(snapshot)

    async def get_state_history(self, params: dict[str, Any]) -> Any:
        graph, _ = await self._graph(params)
        before = params.get("before")
        history = graph.aget_state_history(
            _py_config(params["state_config"]), filter=params.get("filter"), before=before, limit=params.get("limit")
        )
        return [snapshot_to_js(snapshot) async for snapshot in history]

    async def update_state(self, params: dict[str, Any]) -> Any:
        graph, _ = await self._graph(params)
        return await graph.aupdate_state(
            _py_config(params["state_config"]), _values(params.get("values")), as_node=params.get("as_node")
        )

    async def bulk_update_state(self, params: dict[str, Any]) -> Any:
        graph, _ = await self._graph(params)
        supersteps = [
            [StateUpdate(_values(update.get("values")), update.get("asNode")) for update in step["updates"]]
            for step in params["supersteps"]
        ]
        return await graph.abulk_update_state(_py_config(params["state_config"]), supersteps)

    async def get_graph(self, params: dict[str, Any]) -> Any:
        graph, config = await self._graph(params, False)
        xray = params.get("xray") or False
        drawable = (await graph.aget_graph(config, xray=xray)).to_json()
        for node in drawable.get("nodes", []):
            data = node.get("data")
            if isinstance(data, dict):
                data.pop("id", None)
        return drawable

    async def get_schemas(self, params: dict[str, Any]) -> Any:
        graph, _ = await self._graph(params, False)
        return schemas_of(graph)

    async def get_subgraphs(self, params: dict[str, Any]) -> Any:
        graph, _ = await self._graph(params, False)
        found = graph.aget_subgraphs(namespace=params.get("namespace"), recurse=bool(params.get("recurse")))
        return [[name, schemas_of(subgraph)] async for name, subgraph in found]


def _safe(read: Any) -> Any:
    try:
        return read()
    except Exception:  # noqa: BLE001 - a schema the library cannot express is null, as the Python server shows it
        return None


def schemas_of(graph: Any) -> dict[str, Any]:
    """The state, input, output, config and context JSON schemas of a graph (null where it has none)."""
    state = _safe(lambda: graph.get_output_jsonschema() if not hasattr(graph, "builder") else _state_schema(graph))
    return {
        "state": state,
        "input": _safe(graph.get_input_jsonschema),
        "output": _safe(graph.get_output_jsonschema),
        "config": _safe(graph.get_config_jsonschema),
        "context": _safe(graph.get_context_jsonschema),
    }


def _state_schema(graph: Any) -> Any:
    from pydantic import TypeAdapter

    schema = getattr(graph.builder, "state_schema", None)
    if schema is None:
        return graph.get_output_jsonschema()
    return TypeAdapter(schema).json_schema()
