/**
 * One run from request to record: resolve the graph, authorize (`threads:create_run`), claim the thread, build the
 * run's config (the authenticated user overwrites anything the client sent), stream, then release the thread and
 * hand the finished run to the recorder. Runs execute in the process that received the request: no queue, no poll.
 */
import crypto from 'node:crypto';
import { NotFoundError } from '@graphx/kit/errors';
import { logger } from '@graphx/kit/logger';
import { authorizeFor, type AppAuth } from '../auth/appAuth';
import type { AuthFilter } from '../auth/authorization';
import type { AuthUser } from '../auth/authUser';
import { mergeAssistantConfig, type AssistantDirectory } from '../assistants';
import type { LoadedGraph } from '../graphs';
import type { RuntimeMetrics } from '../metrics';
import type { RunRecorder } from '../recording/runRecorder';
import type { Run, RunOwner, RunStore } from '../storage/runStore';
import type { ThreadStatus, ThreadStore } from '../storage/threadStore';
import type { RunCoordinator, StopReason } from './runCoordinator';
import { claimThread, DEFAULT_MULTITASK_STRATEGY, type ClaimLimits } from './threadClaim';
import { streamGraph, type GraphRunOutcome, type StreamEvent } from './graphStream';
import { recordPayload } from '@graphx/contract/runRecord';
import { toWireJson } from './serialize';
import { protocolEvent, rootLifecycleEnd, streamProtocol, type ProtocolEventKit } from './protocolFrames';
import { heldOpening } from './heldOpening';
import { durabilityOf, graphConfigFor, RunHandedOverError, type PreparedRun, type RunRequest } from './runConfig';
import { hasBreakpoints, pendingInterrupts, stoppedAtBreakpoint } from './runEnd';

export type { PreparedRun, RunRequest } from './runConfig';
export { durabilityOf, RunHandedOverError } from './runConfig';

/**
 * How long a protocol run's opening events wait for the graph's first: long enough for a graph to produce it (a few
 * ms: the checkpoint read, the input's values), short enough that a slow start still shows `running` at once.
 */
const OPENING_HOLD_MS = 50;

export class RunService {
  constructor(
    private readonly deps: {
      assistants: AssistantDirectory;
      threads: ThreadStore;
      runs: RunStore;
      recorder: RunRecorder;
      coordinator: RunCoordinator;
      /** Background checkpoint writes of this process's runs (see TrackedPostgresSaver). */
      checkpointWrites: { settled(threadId: string): Promise<void> };
      claimLimits: ClaimLimits;
      appAuth: AppAuth | null;
      tracing: boolean;
      commandClass: () => Promise<new (fields: Record<string, unknown>) => unknown>;
      /** The app's LangGraph.js pieces that make protocol events (protocolFrames.ts); absent: `streamEvents` v3. */
      protocolEventKit?: () => Promise<ProtocolEventKit | null>;
      /** Runs started/finished per assistant; absent in unit set-ups. */
      metrics?: RuntimeMetrics;
      /** Posts a finished run (with its final values) to the run's `webhook`; absent in unit set-ups. */
      deliverWebhook?: (url: string, run: Run, values: unknown) => Promise<void>;
    },
  ) {}

  /** The graph an assistant id or graph name names (undefined once the assistant is gone). */
  async graphFor(assistantId: string): Promise<LoadedGraph | undefined> {
    return this.deps.assistants.forRun(assistantId, null).then(
      (resolved) => resolved.graph,
      (error: unknown) => {
        if (error instanceof NotFoundError) return undefined;
        throw error;
      },
    );
  }

  /**
   * Resolves the assistant and its graph, authorizes `threads:create_run` (the handler may stamp metadata) and
   * builds the run. The returned request carries the assistant's config and context under the client's.
   */
  async newRun(
    user: AuthUser | null,
    threadId: string | null,
    clientRequest: RunRequest,
    runId: string = crypto.randomUUID(),
  ): Promise<{ graph: LoadedGraph; run: Run; owner: RunOwner; filter: AuthFilter; request: RunRequest }> {
    const { graph, assistant } = await this.deps.assistants.forRun(clientRequest.assistant_id, user);
    const hasDefaults = Object.keys(assistant.config).length > 0 || Object.keys(assistant.context).length > 0;
    const request: RunRequest = hasDefaults
      ? { ...clientRequest, ...mergeAssistantConfig(assistant, clientRequest.config, clientRequest.context) }
      : clientRequest;
    const assistantId = assistant.assistant_id;
    const authValue: Record<string, unknown> = {
      thread_id: threadId ?? undefined,
      assistant_id: assistantId,
      run_id: runId,
      status: 'pending',
      metadata: { ...(request.metadata ?? {}) },
      multitask_strategy: request.multitask_strategy,
      if_not_exists: request.if_not_exists,
      kwargs: request,
    };
    const filter = await authorizeFor(this.deps.appAuth, user, 'threads', 'create_run', authValue);
    const runMetadata = (authValue.metadata ?? {}) as Record<string, unknown>;
    const now = new Date().toISOString();
    const run: Run = {
      run_id: runId,
      thread_id: threadId,
      assistant_id: assistantId,
      status: 'running',
      metadata: runMetadata,
      kwargs: request as unknown as Record<string, unknown>,
      multitask_strategy: threadId ? (request.multitask_strategy ?? DEFAULT_MULTITASK_STRATEGY) : null,
      created_at: now,
      updated_at: now,
    };
    return { graph, run, owner: { identity: user?.identity ?? null, scope: filter }, filter, request };
  }

  /**
   * Everything that can fail with a 4xx happens here, before any byte of the stream: unknown assistant (404),
   * forbidden (403), thread missing or outside the filter (404), thread busy (409). `threadMissing`: the caller found
   * no thread a moment ago (the claim tries creating it first).
   */
  async prepare(
    user: AuthUser | null,
    threadId: string | null,
    clientRequest: RunRequest,
    options: { waitForThread: boolean; threadMissing?: boolean } = { waitForThread: true },
  ): Promise<PreparedRun> {
    const { graph, run, owner, filter, request } = await this.newRun(user, threadId, clientRequest);
    const runId = run.run_id;
    const runMetadata = run.metadata;
    let checkpointBefore: string | null = null;
    if (threadId) {
      const graphMetadata = { graph_id: graph.spec.graphId, assistant_id: run.assistant_id };
      const { created } = await claimThread(
        { coordinator: this.deps.coordinator, runs: this.deps.runs, limits: this.deps.claimLimits },
        {
          threadId,
          runId,
          // Not waiting: a busy thread is a ConflictError at once, whatever the strategy (the caller queues instead).
          strategy: options.waitForThread ? (request.multitask_strategy ?? DEFAULT_MULTITASK_STRATEGY) : 'reject',
          filter,
          graphMetadata,
          createWithMetadata: request.if_not_exists === 'create' ? runMetadata : null,
          likelyMissing: options.threadMissing,
        },
      );
      try {
        await this.deps.runs.insert({ run, owner });
        // A thread this claim made has no checkpoint yet.
        checkpointBefore = created ? null : await this.deps.runs.latestCheckpointId(threadId);
      } catch (error) {
        await this.releaseThread(threadId, runId, { status: 'idle', valuesJson: null, interrupts: {}, error: null });
        throw error;
      }
    }
    return {
      run,
      owner,
      graph,
      stateful: threadId !== null,
      request,
      graphConfig: graphConfigFor(user, run, graph, request),
      startedAt: Date.now(),
      checkpointBefore,
    };
  }

  /**
   * Streams the run: `metadata` first, then the graph's events; records the run when the stream ends in any way. A
   * protocol run's root lifecycle ends after that record (thread released, status written), as a legacy stream ends:
   * a client that starts its next run on seeing `completed` finds the thread free. Its opening (`metadata`, lifecycle
   * `running`) waits up to OPENING_HOLD_MS for the graph's first event, so that they are written (and sent) together.
   */
  async *execute(prepared: PreparedRun, clientSignal: AbortSignal): AsyncGenerator<StreamEvent> {
    const { run, request } = prepared;
    const graphName = prepared.graph.spec.graphId;
    const outcome: GraphRunOutcome = { status: 'error', finalValues: undefined, interrupted: false, error: null };
    // A thread run can also be stopped by another request (interrupt, rollback) or by losing its lease.
    const tracked = run.thread_id || prepared.background ? this.deps.coordinator.track(run.run_id, clientSignal) : null;
    const signal = tracked?.signal ?? clientSignal;
    this.deps.metrics?.runStarted(graphName);
    const metadata: StreamEvent = { event: 'metadata', data: { run_id: run.run_id, attempt: 1 } };
    try {
      if (request.protocol) {
        const running = protocolEvent('lifecycle', [], { event: 'running', graph_name: graphName });
        yield* heldOpening([metadata, running], this.graphEvents(prepared, signal, outcome), OPENING_HOLD_MS);
      } else {
        yield metadata;
        yield* this.graphEvents(prepared, signal, outcome);
      }
    } catch (error) {
      outcome.status = 'error';
      outcome.error = { error: (error as Error).name || 'Error', message: (error as Error).message };
      if (!request.protocol) yield { event: 'error', data: outcome.error };
    } finally {
      if (signal.aborted && outcome.status !== 'error') outcome.status = 'interrupted';
      tracked?.untrack();
      this.deps.metrics?.runFinished(graphName, outcome.status, prepared.startedAt);
      await this.finish(prepared, outcome, tracked?.reason() ?? null, clientSignal.reason instanceof RunHandedOverError);
    }
    if (request.protocol) yield protocolEvent('lifecycle', [], rootLifecycleEnd(outcome, graphName));
  }

  /** The graph's events of the run (after `metadata`); fills `outcome`. */
  private async *graphEvents(prepared: PreparedRun, signal: AbortSignal, outcome: GraphRunOutcome): AsyncGenerator<StreamEvent> {
    const { run, request } = prepared;
    const graph = await prepared.graph.forRun(prepared.graphConfig, prepared.stateful);
    const input = !request.command
      ? (request.input ?? null)
      : graph.command
        ? graph.command(request.command)
        : new (await this.deps.commandClass())(request.command);
    const options = {
      modes: request.stream_mode,
      config: prepared.graphConfig,
      signal,
      subgraphs: Boolean(request.stream_subgraphs),
      interruptBefore: request.interrupt_before ?? undefined,
      interruptAfter: request.interrupt_after ?? undefined,
      durability: durabilityOf(request),
    };
    if (request.protocol) {
      const protocolOptions = {
        ...prepared.graphConfig,
        signal,
        ...(options.interruptBefore ? { interruptBefore: options.interruptBefore } : {}),
        ...(options.interruptAfter ? { interruptAfter: options.interruptAfter } : {}),
        ...(options.durability ? { durability: options.durability } : {}),
      };
      // A graph held elsewhere (Python) makes its own protocol events; the app's LangGraph.js graph, with its library's.
      const kit = graph.command ? null : ((await this.deps.protocolEventKit?.()) ?? null);
      yield* streamProtocol(graph, input, protocolOptions, outcome, kit);
    } else {
      yield* streamGraph(graph, input, { ...options, outputNeeded: this.outputNeeded(run, request) }, outcome);
    }
  }

  /** Whether anyone reads the run's final values: the thread's stored values, the trace record or the webhook. */
  private outputNeeded(run: Run, request: RunRequest): boolean {
    return run.thread_id !== null || this.deps.tracing || Boolean(request.webhook);
  }

  private async releaseThread(
    threadId: string,
    runId: string,
    outcome: Parameters<RunCoordinator['leases']['release']>[2],
  ): Promise<void> {
    await this.deps.coordinator.leases.release(threadId, runId, outcome);
    await this.deps.coordinator.announceRelease(threadId).catch(() => undefined);
  }

  private async finish(
    prepared: PreparedRun,
    outcome: GraphRunOutcome,
    stopReason: StopReason | null,
    handedOver: boolean,
  ): Promise<void> {
    const { run } = prepared;
    // A stopped run can still have a checkpoint on its way; nobody may see or delete the thread before it lands.
    if (run.thread_id) await this.deps.checkpointWrites.settled(run.thread_id);
    if (run.thread_id && stopReason === 'rollback') {
      // The owner rolls back before it lets go of the thread, so the next run never sees this run's checkpoints.
      await this.deps.runs.deleteRunAndCheckpoints(run.thread_id, run.run_id, prepared.checkpointBefore);
      await this.releaseThread(run.thread_id, run.run_id, { status: 'idle', valuesJson: null, interrupts: {}, error: null });
      return;
    }
    const valuesJson =
      !this.outputNeeded(run, prepared.request) || outcome.finalValues === undefined ? null : toWireJson(outcome.finalValues);
    const endedAt = new Date();
    const status = outcome.status;
    if (run.thread_id && status === 'success' && !stopReason && hasBreakpoints(prepared.request)) {
      // A static breakpoint ends the stream quietly; the thread is interrupted when the graph has a next node.
      if (await stoppedAtBreakpoint(prepared)) outcome.interrupted = true;
    }
    if (run.thread_id) {
      const threadStatus: ThreadStatus = status === 'error' ? 'error' : outcome.interrupted ? 'interrupted' : 'idle';
      // Only an interrupted run pays for the extra state read that names its pending interrupts.
      const interrupts = outcome.interrupted && !stopReason ? await pendingInterrupts(prepared) : {};
      // The thread is released before the stream closes, so the client's next run on it is never refused as busy;
      // its values are written before the run's status, so a join that sees the run finished reads its answer.
      await this.releaseThread(run.thread_id, run.run_id, {
        status: threadStatus,
        valuesJson,
        interrupts,
        error: outcome.error?.message ?? null,
      });
      await this.deps.runs.setStatus(run.run_id, status);
    }
    const finished: Run | null = run.thread_id ? null : { ...run, status, updated_at: endedAt.toISOString() };
    const trace = this.deps.tracing
      ? {
          run_id: run.run_id,
          thread_id: run.thread_id,
          assistant_id: prepared.graph.spec.graphId,
          status,
          start_time: new Date(prepared.startedAt).toISOString(),
          end_time: endedAt.toISOString(),
          error: outcome.error ? `${outcome.error.error}: ${outcome.error.message}` : null,
          inputs: recordPayload(toWireJson(prepared.request.input ?? prepared.request.command ?? null)),
          outputs: valuesJson === null ? null : recordPayload(valuesJson),
        }
      : null;
    this.deps.recorder.record(finished && { run: finished, owner: prepared.owner }, trace);
    // Every kind of run (streamed, waited, background) calls its webhook once it is over, as the anchor's queue does.
    const webhook = prepared.request.webhook;
    if (webhook && this.deps.deliverWebhook && !handedOver) {
      const ended: Run = { ...run, status, updated_at: endedAt.toISOString() };
      void this.deps.deliverWebhook(webhook, ended, outcome.finalValues).catch((error: unknown) => {
        logger.warn({ err: error, runId: run.run_id }, 'run webhook not delivered');
      });
    }
  }

  /**
   * Runs to the end and returns the final values (`POST .../runs/wait`); a failure is `{"__error__": …}`.
   * `onEvent` sees each event on the way (thread streams show the run).
   */
  async wait(prepared: PreparedRun, signal: AbortSignal, onEvent?: (event: StreamEvent) => void): Promise<unknown> {
    let last: unknown = null;
    for await (const event of this.execute({ ...prepared, request: { ...prepared.request, stream_mode: ['values'] } }, signal)) {
      onEvent?.(event);
      if (event.event === 'values') last = event.data;
      if (event.event === 'error') return { __error__: event.data };
    }
    return last;
  }
}
