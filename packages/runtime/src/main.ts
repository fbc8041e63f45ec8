/**
 * Entry points of the deployed application ("runtime"): `graphx runtime` (started by a rollout, configured by its
 * environment) and `graphx dev` (one application directory alone, embedded PostgreSQL, no control plane).
 */
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '@graphx/kit/os/embeddedPostgres';
import { logger } from '@graphx/kit/logger';
import { loadAppConfig } from './appConfig';
import { devStudioToken, devStudioUrl } from './http/devStudio';
import { loopbackToken } from './http/loopback';
import { startRuntime, type RunningRuntime } from './server';
import { runtimeSettingsFromEnv, runtimeWorkersFromEnv } from './settings';
import { servesHere, superviseWorkers } from './workers';

/** Stops on SIGTERM/SIGINT (stop accepting, let streams finish, write run records, exit 0) or when a part is lost. */
function stopOnSignals(runtime: RunningRuntime, after?: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'runtime stopping');
    void runtime
      .stop()
      .then(() => after?.())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'runtime did not stop cleanly');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  // A lost part (the Python executor killed): stop as on a signal, but exit with the loss's code so the runner (or the
  // worker supervisor) starts a replacement instead of keeping a server whose Python graphs all fail.
  void runtime.lost.then((loss) => {
    if (stopping) return;
    stopping = true;
    logger.fatal({ exitCode: loss.exitCode }, loss.reason);
    void runtime
      .stop()
      .then(() => after?.())
      .catch((error: unknown) => logger.error({ err: error }, 'runtime did not stop cleanly'))
      .finally(() => process.exit(loss.exitCode));
  });
}

/** `graphx runtime`: serves the application a rollout built, configured by the environment. */
export async function runRuntimeFromEnv(): Promise<void> {
  const settings = runtimeSettingsFromEnv();
  loopbackToken(); // before forking: every worker must accept the others' loopback requests
  if (!servesHere(settings.workers)) process.exit(await superviseWorkers(settings.workers, {}));
  const runtime = await startRuntime({
    configPath: settings.configPath,
    databaseUri: settings.databaseUri,
    port: settings.port,
    host: settings.host,
    controlPlane:
      settings.controlPlaneUrl && settings.serviceToken
        ? { url: settings.controlPlaneUrl, serviceToken: settings.serviceToken, socketPath: settings.controlPlaneSocket }
        : null,
  });
  stopOnSignals(runtime);
}

/**
 * `graphx dev --config <graphx.json>`: one application alone, on `DATABASE_URI` or an embedded PostgreSQL kept in
 * `<app dir>/.graphx/` (so threads survive restarts), without the control plane.
 */
export async function runDev(options: { configPath: string; port: number; host: string }): Promise<void> {
  const configPath = path.resolve(options.configPath);
  // Validated before any side effect: a wrong path must not first initialise a PostgreSQL cluster next to it.
  loadAppConfig(configPath);
  const workers = runtimeWorkersFromEnv();
  // A developer's machine: webhooks may call back to local servers and to the app itself, as the anchor's dev server.
  process.env.GRAPHX_RUNTIME_WEBHOOK_DESTINATIONS ||= 'any';
  loopbackToken(); // before forking: every worker must accept the others' loopback requests
  devStudioToken(); // the same: the studio's requests reach any worker
  let embedded: EmbeddedPostgresHandle | null = null;
  let databaseUri = process.env.DATABASE_URI;
  if (!databaseUri) {
    embedded = await startEmbeddedPostgres(path.join(path.dirname(configPath), '.graphx'), 'graphx_dev');
    databaseUri = embedded.connectionString('graphx_dev');
  }
  if (!servesHere(workers)) {
    // The workers use the primary's database (embedded or not); the primary stops PostgreSQL after they are gone.
    const code = await superviseWorkers(workers, { DATABASE_URI: databaseUri });
    await embedded?.stop();
    process.exit(code);
  }
  const runtime = await startRuntime({
    configPath,
    databaseUri,
    port: options.port,
    host: options.host,
    controlPlane: null,
    devStudio: true,
  }).catch(async (error: unknown) => {
    await embedded?.stop();
    throw error;
  });
  console.log(`graphx dev: serving ${configPath} at ${runtime.url}`);
  console.log(`graphx dev: studio at ${devStudioUrl(runtime.url)}`);
  stopOnSignals(runtime, async () => embedded?.stop());
}
