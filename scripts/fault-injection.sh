#!/bin/sh
# The whole fault-injection matrix of issue 24 on `graphx start` (process runner): SIGKILL and SIGSTOP of the main
# process, the worker, PostgreSQL and the Temporal dev server, each in the clone, build, database and rollout phases,
# repeated GRAPHX_FAULT_REPEAT times (default 2): 64 cases, about 20 minutes on 2 cores; bounded by
# GRAPHX_FAULT_TIME_BOUND_MS (default 90 s a case). `npm test` runs a representative subset of 8 cases.
# GRAPHX_FAULT_CASES=SIGKILL:postgres:database,... runs chosen cases only.
set -eu
cd "$(dirname "$0")/.."
GRAPHX_FAULT_MATRIX=full exec npx jest --runInBand test/e2e/faultInjection.test.ts "$@"
