/**
 * One run streamed from the app: every event kept for the event list, the latest root `values`, and each node's state
 * from the `tasks` stream (a task that starts lights its node; its result marks it done, failed or interrupted).
 * Subgraph events (`streamSubgraphs`) carry a namespace `parent:<task id>|…`, mapped to the xray node `parent:name`.
 */
import type { Client, Command } from '@langchain/langgraph-sdk';
import { useCallback, useRef, useState } from 'react';
import type { NodeState } from './GraphView';

export interface StreamedEvent {
  seq: number;
  event: string;
  namespace: string[];
  data: unknown;
}

export type RunPhase = 'idle' | 'running' | 'success' | 'interrupted' | 'error' | 'cancelled';

export interface RunRequest {
  assistantId: string;
  threadId: string;
  input?: Record<string, unknown> | null;
  command?: Command;
  config?: Record<string, unknown>;
  context?: unknown;
  interruptBefore?: string[];
  interruptAfter?: string[];
  checkpointId?: string;
}

const MAX_EVENTS = 1000;
const STREAM_MODES = ['values', 'updates', 'messages-tuple', 'tasks', 'custom'] as const;

/** `tasks|search:1f0…|query:…` → the node id in the xray picture (`search:query`) for task `name`. */
export function nodeIdOf(namespace: string[], name: string): string {
  return [...namespace.map((segment) => segment.split(':')[0]), name].join(':');
}

interface TaskEvent {
  id?: string;
  name?: string;
  error?: unknown;
  result?: unknown;
  interrupts?: unknown[];
}

export function useRunStream(client: Client) {
  const [events, setEvents] = useState<StreamedEvent[]>([]);
  const [values, setValues] = useState<unknown>(null);
  const [nodeStates, setNodeStates] = useState<ReadonlyMap<string, NodeState>>(new Map());
  const [phase, setPhase] = useState<RunPhase>('idle');
  const [error, setError] = useState<string | null>(null);
  const [runId, setRunId] = useState<string | null>(null);
  const current = useRef<{ abort: AbortController; threadId: string; runId: string | null } | null>(null);

  const start = useCallback(
    async (request: RunRequest): Promise<RunPhase> => {
      current.current?.abort.abort();
      const abort = new AbortController();
      const run = { abort, threadId: request.threadId, runId: null as string | null };
      current.current = run;
      setEvents([]);
      setValues(null);
      setNodeStates(new Map());
      setError(null);
      setRunId(null);
      setPhase('running');
      let seq = 0;
      let outcome: RunPhase = 'success';
      const states = new Map<string, NodeState>();
      try {
        const stream = client.runs.stream(request.threadId, request.assistantId, {
          input: request.command ? undefined : (request.input ?? null),
          command: request.command,
          config: request.config,
          context: request.context,
          interruptBefore: request.interruptBefore?.length ? request.interruptBefore : undefined,
          interruptAfter: request.interruptAfter?.length ? request.interruptAfter : undefined,
          checkpointId: request.checkpointId,
          streamMode: [...STREAM_MODES],
          streamSubgraphs: true,
          multitaskStrategy: 'reject',
          signal: abort.signal,
          onRunCreated: ({ run_id }) => {
            run.runId = run_id;
            setRunId(run_id);
          },
        });
        for await (const chunk of stream) {
          const [event = '', ...namespace] = String(chunk.event).split('|');
          const item: StreamedEvent = { seq: seq++, event, namespace, data: chunk.data };
          setEvents((kept) => (kept.length >= MAX_EVENTS ? [...kept.slice(1), item] : [...kept, item]));
          if (event === 'values' && namespace.length === 0) setValues(chunk.data);
          if (event === 'error') {
            outcome = 'error';
            const data = chunk.data as { message?: string; error?: string } | null;
            setError(data?.message ?? data?.error ?? 'The run failed.');
          }
          if (event === 'tasks') {
            const task = chunk.data as TaskEvent;
            if (!task?.name) continue;
            const id = nodeIdOf(namespace, task.name);
            const finished = 'result' in task || 'error' in task;
            const state: NodeState = !finished
              ? 'running'
              : task.error
                ? 'error'
                : task.interrupts && task.interrupts.length > 0
                  ? 'interrupted'
                  : 'done';
            if (state === 'interrupted' && outcome === 'success') outcome = 'interrupted';
            states.set(id, state);
            setNodeStates(new Map(states));
          }
        }
      } catch (failure) {
        if (abort.signal.aborted) outcome = 'cancelled';
        else {
          outcome = 'error';
          setError((failure as Error).message);
        }
      }
      if (current.current === run) {
        setPhase(outcome);
        current.current = null;
      }
      return outcome;
    },
    [client],
  );

  /** Cancels the run on the server (it stops there too), then stops reading. */
  const cancel = useCallback(async () => {
    const run = current.current;
    if (!run) return;
    if (run.runId) await client.runs.cancel(run.threadId, run.runId).catch(() => {});
    run.abort.abort();
  }, [client]);

  /** Back to no run shown (another thread or assistant was picked); a run in progress is left to finish. */
  const reset = useCallback(() => {
    current.current?.abort.abort();
    current.current = null;
    setEvents([]);
    setValues(null);
    setNodeStates(new Map());
    setError(null);
    setRunId(null);
    setPhase('idle');
  }, []);

  return { events, values, nodeStates, phase, error, runId, start, cancel, reset };
}
