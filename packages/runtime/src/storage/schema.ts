/**
 * The runtime's tables in the deployment's own database, created on start. Several instances of one revision start
 * together, so creation (ours and the checkpointer's migrations) runs under one advisory lock.
 */
import type { Pool, PoolClient } from 'pg';

// Arbitrary constant shared by every runtime instance and the Python executor: "graphx runtime schema".
const SCHEMA_LOCK_KEY = 7_384_112_019;
/** How long an instance waits for another's schema creation before it gives up (and says so). */
const SCHEMA_LOCK_TIMEOUT_MS = 180_000;
const SCHEMA_LOCK_POLL_MS = 100;

const STATEMENTS = [
  `CREATE TABLE IF NOT EXISTS graphx_threads (
     thread_id uuid PRIMARY KEY,
     created_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now(),
     metadata jsonb NOT NULL DEFAULT '{}',
     status text NOT NULL DEFAULT 'idle',
     config jsonb NOT NULL DEFAULT '{}',
     "values" jsonb,
     interrupts jsonb NOT NULL DEFAULT '{}',
     error text)`,
  `COMMENT ON TABLE graphx_threads IS 'Threads of the agent server; state itself lives in the checkpoint tables'`,
  `ALTER TABLE graphx_threads ADD COLUMN IF NOT EXISTS busy_run_id uuid,
     ADD COLUMN IF NOT EXISTS busy_owner text, ADD COLUMN IF NOT EXISTS lease_expires_at timestamptz,
     ADD COLUMN IF NOT EXISTS cancel_action text`,
  `COMMENT ON COLUMN graphx_threads.busy_owner IS 'Runtime process running busy_run_id; its heartbeat pushes lease_expires_at'`,
  `COMMENT ON COLUMN graphx_threads.cancel_action IS 'interrupt or rollback, asked of the busy run by another request'`,
  `ALTER TABLE graphx_threads ADD COLUMN IF NOT EXISTS state_updated_at timestamptz`,
  `ALTER TABLE graphx_threads ADD COLUMN IF NOT EXISTS ttl_strategy text, ADD COLUMN IF NOT EXISTS ttl_minutes double precision,
     ADD COLUMN IF NOT EXISTS expires_at timestamptz`,
  `COMMENT ON COLUMN graphx_threads.expires_at IS 'When the TTL sweeper acts (ttl_strategy delete or keep_latest); pushed back by each run'`,
  `CREATE INDEX IF NOT EXISTS graphx_threads_expires ON graphx_threads (expires_at) WHERE expires_at IS NOT NULL`,
  `COMMENT ON COLUMN graphx_threads.state_updated_at IS 'When the values last changed (a run or a state update): sort_by state_updated_at'`,
  `CREATE INDEX IF NOT EXISTS graphx_threads_busy_run ON graphx_threads (busy_run_id) WHERE busy_run_id IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS graphx_threads_metadata ON graphx_threads USING gin (metadata jsonb_path_ops)`,
  `CREATE INDEX IF NOT EXISTS graphx_threads_created ON graphx_threads (created_at DESC)`,
  `CREATE TABLE IF NOT EXISTS graphx_runs (
     run_id uuid PRIMARY KEY,
     thread_id uuid,
     assistant_id text NOT NULL,
     status text NOT NULL,
     metadata jsonb NOT NULL DEFAULT '{}',
     kwargs jsonb NOT NULL DEFAULT '{}',
     multitask_strategy text,
     created_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now())`,
  `COMMENT ON TABLE graphx_runs IS 'Runs; threadless runs are written in batches after they finish'`,
  `CREATE INDEX IF NOT EXISTS graphx_runs_thread ON graphx_runs (thread_id, created_at DESC)`,
  `ALTER TABLE graphx_runs ADD COLUMN IF NOT EXISTS background boolean NOT NULL DEFAULT false,
     ADD COLUMN IF NOT EXISTS config jsonb, ADD COLUMN IF NOT EXISTS owner text,
     ADD COLUMN IF NOT EXISTS lease_expires_at timestamptz, ADD COLUMN IF NOT EXISTS attempt integer NOT NULL DEFAULT 0`,
  `COMMENT ON COLUMN graphx_runs.background IS 'Queued run (POST /runs, /threads/{id}/runs, crons): any instance executes it'`,
  `COMMENT ON COLUMN graphx_runs.config IS 'Background run: the graph config built at creation (user included)'`,
  `COMMENT ON COLUMN graphx_runs.owner IS 'Background run: instance executing it; its heartbeat pushes lease_expires_at'`,
  `COMMENT ON COLUMN graphx_runs.attempt IS 'Background run: executions started; above 1 the run resumes from its checkpoint'`,
  `CREATE INDEX IF NOT EXISTS graphx_runs_queue ON graphx_runs (created_at) WHERE background AND status IN ('pending', 'running')`,
  `ALTER TABLE graphx_runs ADD COLUMN IF NOT EXISTS auth_identity text,
     ADD COLUMN IF NOT EXISTS auth_scope jsonb NOT NULL DEFAULT '{}'`,
  `COMMENT ON COLUMN graphx_runs.auth_identity IS 'Identity of the authenticated user who created the run (null: none)'`,
  `COMMENT ON COLUMN graphx_runs.auth_scope IS 'Filter of the creator threads:create_run handler; a threadless run is visible where metadata || auth_scope contains the reader filter'`,
  `ALTER TABLE graphx_runs ADD COLUMN IF NOT EXISTS cancel_action text`,
  `COMMENT ON COLUMN graphx_runs.cancel_action IS 'interrupt or rollback, asked of a queued run before it held its thread (threadLeases.ts requestCancel)'`,
  `CREATE TABLE IF NOT EXISTS graphx_assistants (
     assistant_id uuid PRIMARY KEY,
     graph_id text NOT NULL,
     name text NOT NULL,
     description text,
     config jsonb NOT NULL DEFAULT '{}',
     context jsonb NOT NULL DEFAULT '{}',
     metadata jsonb NOT NULL DEFAULT '{}',
     version integer NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now())`,
  `COMMENT ON TABLE graphx_assistants IS 'Assistants (system ones from graphx.json, metadata created_by=system) at their current version'`,
  `COMMENT ON COLUMN graphx_assistants.version IS 'The version of graphx_assistant_versions this row copies (set latest can go back)'`,
  `CREATE INDEX IF NOT EXISTS graphx_assistants_metadata ON graphx_assistants USING gin (metadata jsonb_path_ops)`,
  `CREATE TABLE IF NOT EXISTS graphx_assistant_versions (
     assistant_id uuid NOT NULL REFERENCES graphx_assistants (assistant_id) ON DELETE CASCADE,
     version integer NOT NULL,
     graph_id text NOT NULL,
     name text NOT NULL,
     description text,
     config jsonb NOT NULL DEFAULT '{}',
     context jsonb NOT NULL DEFAULT '{}',
     metadata jsonb NOT NULL DEFAULT '{}',
     created_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (assistant_id, version))`,
  `COMMENT ON TABLE graphx_assistant_versions IS 'Every version of every assistant; a PATCH appends one'`,
  `CREATE TABLE IF NOT EXISTS graphx_crons (
     cron_id uuid PRIMARY KEY,
     assistant_id text NOT NULL,
     thread_id uuid,
     user_id text,
     auth_user jsonb,
     schedule text NOT NULL,
     timezone text,
     end_time timestamptz,
     enabled boolean NOT NULL DEFAULT true,
     on_run_completed text NOT NULL DEFAULT 'delete',
     payload jsonb NOT NULL DEFAULT '{}',
     metadata jsonb NOT NULL DEFAULT '{}',
     next_run_date timestamptz,
     created_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now())`,
  `COMMENT ON TABLE graphx_crons IS 'Crons; the instance that locks a due row fires it and moves next_run_date on'`,
  `COMMENT ON COLUMN graphx_crons.auth_user IS 'The creator as custom auth saw it: the runs it fires act as this user'`,
  `CREATE INDEX IF NOT EXISTS graphx_crons_due ON graphx_crons (next_run_date) WHERE enabled`,
  `CREATE INDEX IF NOT EXISTS graphx_crons_metadata ON graphx_crons USING gin (metadata jsonb_path_ops)`,
  `CREATE TABLE IF NOT EXISTS graphx_run_events (
     id bigserial PRIMARY KEY,
     run_id uuid,
     thread_id uuid,
     seq integer NOT NULL,
     event text NOT NULL,
     data json,
     created_at timestamptz NOT NULL DEFAULT now())`,
  // jsonb until 2026-12 (its key order is not the wire's); the rows are short-lived, the rewrite is small.
  `DO $$ BEGIN
     IF (SELECT atttypid FROM pg_attribute WHERE attrelid = 'graphx_run_events'::regclass AND attname = 'data')
        = 'jsonb'::regtype THEN
       ALTER TABLE graphx_run_events ALTER COLUMN data TYPE json USING data::json;
     END IF;
   END $$`,
  `COMMENT ON COLUMN graphx_run_events.data IS 'The event''s data as the wire JSON written (json keeps its text and key order)'`,
  `COMMENT ON TABLE graphx_run_events IS 'Events of joinable runs for join and thread streams on any instance; swept after their run ends'`,
  `COMMENT ON COLUMN graphx_run_events.seq IS 'Per-run event number: the id of run join streams (thread streams use id)'`,
  `CREATE UNIQUE INDEX IF NOT EXISTS graphx_run_events_run ON graphx_run_events (run_id, seq) WHERE run_id IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS graphx_run_events_thread ON graphx_run_events (thread_id, id) WHERE thread_id IS NOT NULL`,
  `CREATE TABLE IF NOT EXISTS graphx_trace_outbox (
     run_id uuid PRIMARY KEY,
     record jsonb NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now(),
     claimed_until timestamptz NOT NULL DEFAULT '-infinity')`,
  `COMMENT ON TABLE graphx_trace_outbox IS 'Run records not yet accepted by the control plane; deleted once delivered'`,
];

/**
 * Creates the runtime tables, then the checkpointer's and the store's (`migrateLibraries`, on connections of its own),
 * once across concurrently starting instances.
 */
export async function ensureRuntimeSchema(pool: Pool, migrateLibraries: () => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await takeSchemaLock(client);
    for (const statement of STATEMENTS) await client.query(statement);
    await migrateLibraries();
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [SCHEMA_LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}

/**
 * The schema lock, taken by polling `pg_try_advisory_lock`, never by blocking in `pg_advisory_lock`: a session
 * blocked there holds a snapshot, and the Python checkpointer's migrations (run under the same lock by the executor)
 * include CREATE INDEX CONCURRENTLY, which waits for every older snapshot to end. The lock's holder is then an idle
 * session waiting on its own client, so PostgreSQL sees no deadlock and both instances hang (seen when two instances
 * of a Python app started together on a new database). A poll is one short statement: no snapshot outlives it.
 */
async function takeSchemaLock(client: PoolClient): Promise<void> {
  const deadline = Date.now() + SCHEMA_LOCK_TIMEOUT_MS;
  for (;;) {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [SCHEMA_LOCK_KEY]);
    if (rows[0]?.locked) return;
    if (Date.now() > deadline) {
      throw new Error(
        `Another instance has been creating the database schema for ${SCHEMA_LOCK_TIMEOUT_MS / 1000} s; this one gives up (look for a stuck instance of this deployment).`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, SCHEMA_LOCK_POLL_MS));
  }
}
