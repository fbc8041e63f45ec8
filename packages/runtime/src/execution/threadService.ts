/**
 * What the thread routes do, apart from HTTP: search, create, count, read, patch, delete (stopping a busy run and
 * dropping the checkpoints) (state and history: threadState.ts). Every operation takes the caller's authorization filter;
 * a thread outside it is not found.
 */
import { NotFoundError } from '@graphx/kit/errors';
import type { AuthFilter } from '../auth/authorization';
import type { RunStatus, RunStore } from '../storage/runStore';
import type { ThreadQuery, ThreadStatus, ThreadStore } from '../storage/threadStore';
import type { RunCoordinator } from './runCoordinator';

/** A validated search (POST /threads/search body or GET /threads query). */
export interface ThreadSearchInput {
  metadata?: Record<string, unknown> | null;
  values?: Record<string, unknown> | null;
  status?: ThreadStatus;
  ids?: string[];
  limit: number;
  offset: number;
  sort_by: ThreadQuery['sortBy'];
  sort_order: ThreadQuery['sortOrder'];
  /** Fields each thread keeps in the answer (all when absent). */
  select?: string[];
  /** Alias → path into the thread, answered under `extracted` (http/threadProjection.ts). */
  extract?: Record<string, string>;
}

export interface ThreadServiceDeps {
  threads: ThreadStore;
  runs: RunStore;
  coordinator: RunCoordinator;
  deleteCheckpoints: (threadId: string) => Promise<void>;
  /** A deleted thread's crons go with it (they could only fail from then on). */
  crons?: { deleteForThread(threadId: string): Promise<void> };
}

/** How long deleting a busy thread waits for its run to stop before dropping the checkpoints anyway. */
const STOP_WAIT_MS = 5_000;

const threadNotFound = (threadId: string) => new NotFoundError(`Thread with ID ${threadId} not found.`);

export class ThreadService {
  constructor(private readonly deps: ThreadServiceDeps) {}

  /** One page of threads and the total matching. */
  search(input: ThreadSearchInput, filter: AuthFilter) {
    return this.deps.threads.search(
      {
        metadata: input.metadata ?? undefined,
        values: input.values ?? undefined,
        status: input.status,
        ids: input.ids,
        limit: input.limit,
        offset: input.offset,
        sortBy: input.sort_by,
        sortOrder: input.sort_order,
      },
      filter,
    );
  }

  /** Creates a thread (or returns the existing one with `if_exists: do_nothing`). */
  create(input: { threadId?: string; metadata: Record<string, unknown>; ifExists: 'raise' | 'do_nothing' }, filter: AuthFilter) {
    return this.deps.threads.create(input, filter);
  }

  count(input: Pick<ThreadSearchInput, 'metadata' | 'values' | 'status'>, filter: AuthFilter) {
    return this.deps.threads.count(
      { metadata: input.metadata ?? undefined, values: input.values ?? undefined, status: input.status },
      filter,
    );
  }

  /** @throws NotFoundError when the thread does not exist or is outside the filter. */
  async get(threadId: string, filter: AuthFilter) {
    const thread = await this.deps.threads.get(threadId, filter);
    if (!thread) throw threadNotFound(threadId);
    return thread;
  }

  /** @throws NotFoundError when the thread does not exist or is outside the filter. */
  async patchMetadata(threadId: string, metadata: Record<string, unknown>, filter: AuthFilter) {
    const thread = await this.deps.threads.patchMetadata(threadId, metadata, filter);
    if (!thread) throw threadNotFound(threadId);
    return thread;
  }

  /** Deletes the thread; a run still busy on it is stopped first, then its checkpoints go with the thread's. */
  async delete(threadId: string, filter: AuthFilter): Promise<void> {
    const deleted = await this.deps.threads.delete(threadId, filter);
    if (!deleted) throw threadNotFound(threadId);
    if (deleted.busyRunId) await this.deps.coordinator.stopRunOfDeletedThread(threadId, deleted.busyRunId, STOP_WAIT_MS);
    await this.deps.deleteCheckpoints(threadId);
    await this.deps.crons?.deleteForThread(threadId);
  }

  /** The thread's runs, newest first. */
  async runs(threadId: string, page: { limit: number; offset: number; status?: RunStatus }, filter: AuthFilter) {
    await this.get(threadId, filter);
    return this.deps.runs.listForThread(threadId, page.limit, page.offset, page.status ?? null);
  }
}
