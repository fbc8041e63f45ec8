"""graphx's Python executor: loads the application's Python graphs and runs them for the agent server (Node).

It speaks JSON lines with the server over one socket inherited as a file descriptor (see rpc.py); the server keeps
HTTP, the run queue, threads, runs and the long-term store, this process keeps the graphs and their checkpoints.
"""

from .lazy_imports import defer_package_inits

# Before anything imports langgraph or langchain-core (which import both packages): see lazy_imports.py.
defer_package_inits()
