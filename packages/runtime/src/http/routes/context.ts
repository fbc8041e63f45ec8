/** What the runtime's routes are built from, and the per-request helpers they share. */
import type { BaseStore } from '@langchain/langgraph-checkpoint';
import type Koa from 'koa';
import { authorizeFor, type AppAuth } from '../../auth/appAuth';
import type { AuthFilter } from '../../auth/authorization';
import type { AssistantDirectory } from '../../assistants';
import type { AuthUser, RequestAuth } from '../../auth/authUser';
import type { BackgroundRuns } from '../../execution/backgroundRuns';
import type { RunCoordinator } from '../../execution/runCoordinator';
import type { RunEvents } from '../../execution/runEvents';
import type { RunService } from '../../execution/runService';
import type { ThreadStateService } from '../../execution/threadState';
import type { GraphRegistry } from '../../graphs';
import type { ModuleLoader } from '../../graphSchemas';
import type { RuntimeMetrics } from '../../metrics';
import type { RunEventStore } from '../../storage/runEventStore';
import type { RunQueueStore } from '../../storage/runQueueStore';
import type { CronStore } from '../../storage/cronStore';
import type { RunStore } from '../../storage/runStore';
import type { ThreadStore } from '../../storage/threadStore';
import type { ThreadStorage } from '../../storage/threadStorage';

export interface RuntimeServices {
  graphs: GraphRegistry;
  assistants: AssistantDirectory;
  /** Imports a package as the application resolves it (its own @langchain/langgraph, for graph schemas). */
  appImport: ModuleLoader;
  threads: ThreadStore;
  runs: RunStore;
  runService: RunService;
  threadState: ThreadStateService;
  backgroundRuns: BackgroundRuns;
  runQueue: RunQueueStore;
  runEvents: RunEvents;
  eventStore: RunEventStore;
  store: BaseStore;
  crons: CronStore;
  coordinator: RunCoordinator;
  /** The app's custom auth; null: none (API keys, or nobody in `graphx dev`). */
  appAuth: AppAuth | null;
  /** Deleting a thread also drops its checkpoints. */
  deleteCheckpoints: (threadId: string) => Promise<void>;
  /** `keep_latest` prune: only the thread's newest checkpoint stays. */
  pruneCheckpoints: (threadId: string) => Promise<void>;
  info: Record<string, unknown>;
  /** Bytes the thread's checkpoints occupy (`GET /threads/{id}/storage`). */
  threadStorage: (threadId: string) => Promise<ThreadStorage>;
  /** Throws when the deployment's database does not answer (`GET /ok?check_db=1`). */
  checkDatabase: () => Promise<void>;
  metrics: RuntimeMetrics;
  /** The custom app's own OpenAPI document (a FastAPI `http.app`'s), merged into /openapi.json; null: none. */
  customOpenApi?: Record<string, unknown> | null;
}

export function userOf(ctx: Koa.Context): AuthUser | null {
  return (ctx.state.auth as RequestAuth | undefined)?.user ?? null;
}

/** Runs the app's authorization handler for `resource:action` (none without a user or custom auth). */
export async function filterFor(
  services: RuntimeServices,
  ctx: Koa.Context,
  resource: 'threads' | 'assistants' | 'crons',
  action: string,
  value: Record<string, unknown>,
): Promise<AuthFilter> {
  return authorizeFor(services.appAuth, userOf(ctx), resource, action, value);
}
