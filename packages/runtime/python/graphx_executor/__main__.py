"""`python -m graphx_executor`: started by the agent server with the socket as fd 3 and the deployment's database in
`DATABASE_URI`; ends when the server closes the socket. Checkpoints go to that database through
langgraph-checkpoint-postgres (the tables LangGraph.js's saver uses too, so the server's own thread operations —
copy, delete, prune, rollback — act on Python threads unchanged)."""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import sys
from typing import Any

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from . import auth as app_auth
from . import loopback
from .graphs import Graphs, load_app_module
from .http_app import HttpApp
from .rpc import Connection
from .store import ServerStore

# The lock the server takes around its own schema creation: instances starting together migrate one at a time.
SCHEMA_LOCK_KEY = 7_384_112_019
SCHEMA_LOCK_TIMEOUT_S = 180
SCHEMA_LOCK_POLL_S = 0.1
EXECUTOR_APPLICATION_NAME = "graphx-executor"


async def _take_schema_lock(conn: Any) -> None:
    """Polls pg_try_advisory_lock rather than blocking in pg_advisory_lock: a blocked session holds a snapshot, and
    the checkpointer's migrations (CREATE INDEX CONCURRENTLY) wait for every older snapshot, while the lock's holder
    is an idle session waiting on its client: a deadlock PostgreSQL cannot see (two instances starting together on a
    new database hung). The agent server's side polls the same way (storage/schema.ts)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SCHEMA_LOCK_TIMEOUT_S
    while True:
        cursor = await conn.execute("SELECT pg_try_advisory_lock(%s) AS locked", (SCHEMA_LOCK_KEY,))
        row = await cursor.fetchone()
        if row and row["locked"]:
            return
        if loop.time() > deadline:
            raise RuntimeError(
                f"Another instance has been creating the database schema for {SCHEMA_LOCK_TIMEOUT_S} s; "
                "this one gives up (look for a stuck instance of this deployment)."
            )
        await asyncio.sleep(SCHEMA_LOCK_POLL_S)


def _connection_options(database_uri: str) -> dict[str, Any]:
    options: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    # Names the executor's sessions in pg_stat_activity (for operators, and for databaseConnectionLoss.test.ts), unless
    # the deployment's URI names them itself.
    if "application_name" not in conninfo_to_dict(database_uri):
        options["application_name"] = EXECUTOR_APPLICATION_NAME
    return options


async def _open_checkpointer(database_uri: str) -> tuple[AsyncPostgresSaver, AsyncConnectionPool]:
    pool = AsyncConnectionPool(
        conninfo=database_uri,
        min_size=1,
        max_size=int(os.environ.get("GRAPHX_EXECUTOR_POOL_SIZE", "8")),
        kwargs=_connection_options(database_uri),
        open=False,
        # PostgreSQL ends idle connections on a restart, a failover or pg_terminate_backend: each one is tested as it
        # leaves the pool, so a run after that gets a new connection instead of the dead one's AdminShutdown.
        check=AsyncConnectionPool.check_connection,
    )
    await pool.open(wait=True, timeout=30)
    saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
    async with pool.connection() as conn:
        await _take_schema_lock(conn)
        try:
            await saver.setup()
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK_KEY,))
    return saver, pool


def _versions() -> dict[str, str | None]:
    """What /info reports for Python graphs (as the Python server's `langgraph_py_version`)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        langgraph = version("langgraph")
    except PackageNotFoundError:
        langgraph = None
    return {"langgraph": langgraph, "python": platform.python_version()}


def _die_with_the_server() -> None:
    """Asks the kernel to kill this process when the agent server that started it dies (Linux). The executor otherwise
    notices the server's end only when it next reads the socket, and one stuck before it serves the socket (once: in a
    schema lock) outlived its killed server for hours. The server names its pid; a server already gone ends us now."""
    parent = os.environ.get("GRAPHX_EXECUTOR_PARENT")
    if sys.platform != "linux" or not parent:
        return
    try:
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != int(parent):
        os._exit(1)


async def main() -> None:
    logging.basicConfig(level=os.environ.get("GRAPHX_EXECUTOR_LOG_LEVEL", "WARNING"), stream=sys.stderr)
    loopback.install()
    connection = await Connection.from_fd(int(os.environ.get("GRAPHX_EXECUTOR_FD", "3")))
    saver, pool = await _open_checkpointer(os.environ["DATABASE_URI"])
    graphs = Graphs(saver, ServerStore(connection))

    async def load(params: dict[str, Any]) -> Any:
        return graphs.load(params["app_dir"], params["graphs"])

    auth: dict[str, Any] = {}

    async def load_auth(params: dict[str, Any]) -> Any:
        spec = params["auth"]
        module = load_app_module(params["app_dir"], spec)
        auth["object"] = app_auth.load_auth(module, spec["exportName"])
        return {"authenticates": auth["object"]._authenticate_handler is not None}

    http_app = HttpApp()

    async def versions(params: dict[str, Any]) -> Any:
        return _versions()

    handlers = {
        "load": load,
        "stream": graphs.stream,
        "stream_events": graphs.stream_events,
        "get_state": graphs.get_state,
        "get_state_history": graphs.get_state_history,
        "update_state": graphs.update_state,
        "bulk_update_state": graphs.bulk_update_state,
        "get_graph": graphs.get_graph,
        "get_schemas": graphs.get_schemas,
        "get_subgraphs": graphs.get_subgraphs,
        "load_auth": load_auth,
        "versions": versions,
        "load_http_app": http_app.load,
        "http_request": http_app.request,
        "set_loopback": loopback.set_loopback,
        "authenticate": lambda params: app_auth.authenticate(auth["object"], params),
        "authorize": lambda params: app_auth.authorize(auth["object"], params),
    }
    try:
        await connection.serve(handlers)  # type: ignore[arg-type]
    finally:
        await http_app.close()
        await pool.close()


if __name__ == "__main__":
    _die_with_the_server()
    asyncio.run(main())
