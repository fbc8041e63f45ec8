/** `graphx start` (= `npm start`): the whole stack in the foreground; Ctrl-C or SIGTERM stops every child. */
import path from 'node:path';
import { loadConfig, type GraphxConfig } from '../config';
import { ConfigError } from '@graphx/kit/errors';
import { applyLogLevel } from '@graphx/kit/logger';
import { embeddedClusterDir } from '@graphx/kit/os/embeddedPostgres';
import { startStack, type StackHandle, type StackOptions } from '../stack';
import { findTemporalCli } from '../temporal/devServer';

export async function runStart(): Promise<void> {
  // The embedded stack is a developer's machine: local repositories and OAuth servers are allowed unless set.
  const config = loadConfig(process.env, {
    GRAPHX_ALLOW_FILE_REPOS: process.env.GRAPHX_ALLOW_FILE_REPOS ?? '1',
    GRAPHX_ALLOW_INSECURE_OAUTH: process.env.GRAPHX_ALLOW_INSECURE_OAUTH ?? '1',
  });
  rebuildConsoleIfStale();
  // The worker runs apart (a stuck worker must not stop the API and the gateway), and a crashed predecessor's leftovers
  // on this data dir are ended first.
  await startAndReport(config, { worker: 'process', takeOver: true });
}

/**
 * `npm start` on a checkout: a console source edited since the last build is built again (scripts/build-console.js,
 * a digest check when nothing changed). A failure is reported, never fatal: the API serves without the console.
 */
function rebuildConsoleIfStale(): void {
  try {
    const { ensureConsoleBuilt } = require('../../scripts/build-console.js') as {
      ensureConsoleBuilt: () => { dir: string | null; reason?: string };
    };
    const result = ensureConsoleBuilt();
    if (!result.dir) console.warn(`graphx: web console not available: ${result.reason}`);
  } catch (error) {
    console.warn(`graphx: the web console could not be built: ${(error as Error).message}`);
  }
}

/**
 * `graphx serve`: the production form of start. The configuration is the environment's alone (no development
 * defaults: no file:// repositories, no plain-http OAuth unless set), and PostgreSQL and Temporal must be external,
 * so a forgotten variable stops start-up instead of quietly starting an embedded database in a container.
 */
export async function runServe(): Promise<void> {
  const config = loadConfig(process.env);
  const missing = [!config.databaseUrl && 'DATABASE_URL', !config.temporalAddress && 'TEMPORAL_ADDRESS'].filter(Boolean);
  if (missing.length > 0) {
    throw new ConfigError(`serve needs an external PostgreSQL and Temporal: set ${missing.join(' and ')} (or use start)`);
  }
  await startAndReport(config);
}

async function startAndReport(config: GraphxConfig, options: StackOptions = {}): Promise<void> {
  applyLogLevel(config);
  const stack = await startStack(config, options);
  const lines = [
    'graphx platform is running',
    `  Console:       ${stack.apiUrl}/console/  (sign in with the API key)`,
    `  API:           ${stack.apiUrl}  (docs: ${stack.apiUrl}/docs)`,
    stack.gatewayUrl
      ? `  Gateway:       ${stack.gatewayUrl}/<deployment-name>`
      : `  Apps:          at their own routes on the cluster (${appRoutes(config)})`,
    `  Temporal:      ${stack.temporalAddress}${config.temporalAddress ? ' (external)' : ' (dev server)'}`,
    `  Temporal UI:   ${stack.temporalUiUrl ?? '(external server: see its own UI)'}`,
    `  PostgreSQL:    ${config.databaseUrl ? 'external (DATABASE_URL)' : `embedded, data in ${embeddedClusterDir(config.dataDir)}`}`,
    `  API key file:  ${stack.apiKeyFile}`,
    `  Retry a failed revision: ${retryCommand(config.temporalCli, stack.temporalAddress, config.temporalNamespace)}`,
  ];
  if (stack.createdApiKey) lines.push(`  New API key (shown once): ${stack.createdApiKey}`);
  lines.push('Press Ctrl-C to stop.');
  console.log(lines.join('\n'));

  stopOnSignals(stack);
}

/** Where a Kubernetes control plane's deployments are reached (no gateway: each has its Ingress or HTTPRoute). */
function appRoutes(config: GraphxConfig): string {
  const route = config.kube?.route;
  return route ? `${route.scheme}://<deployment-name>.${route.baseDomain}, or its custom_url` : 'their routes';
}

/** The operator's `retry` signal as a command that works against this stack's Temporal (README shows it too). */
function retryCommand(configuredCli: string | null, address: string, namespace: string): string {
  let cli = 'temporal';
  try {
    const found = findTemporalCli(configuredCli);
    cli = found.startsWith(`${process.cwd()}/`) ? path.relative(process.cwd(), found) : found;
  } catch {
    // An external Temporal and no CLI here: the operator's own `temporal`.
  }
  return `${cli} workflow signal --address ${address} --namespace ${namespace} --workflow-id revision/<revision-id> --name retry`;
}

/** The whole shutdown, including the apps' drain, fits in this; what is left then is killed. */
const SHUTDOWN_LIMIT_MS = 25_000;
const DUPLICATE_SIGNAL_MS = 1_000;

/**
 * Ctrl-C (SIGINT to the terminal's process group), SIGTERM, or the death of the process that started us (npm, a shell
 * killed by a process manager) stop the stack in order. A second signal, or the time limit, kills what is left at once.
 */
function stopOnSignals(stack: StackHandle): void {
  let stopping = false;
  let firstSignalAt = 0;
  const killNow = (why: string) => {
    console.log(`graphx: ${why}; killing what is left`);
    stack.kill();
    process.exit(130);
  };
  const shutdown = (reason: string) => {
    if (stopping) {
      // Under `npm start`, Ctrl-C reaches us twice at once: from the terminal and forwarded by npm. Only a later one
      // is the user's second Ctrl-C.
      if (Date.now() - firstSignalAt < DUPLICATE_SIGNAL_MS) return;
      return killNow(`${reason} again`);
    }
    stopping = true;
    firstSignalAt = Date.now();
    console.log(`\ngraphx: ${reason}, stopping (again to stop at once)…`);
    setTimeout(() => killNow(`not stopped within ${SHUTDOWN_LIMIT_MS / 1000} s`), SHUTDOWN_LIMIT_MS).unref();
    void stack.stop().then(() => {
      console.log('graphx: stopped');
      process.exit(0);
    });
  };
  process.on('SIGINT', () => shutdown('SIGINT received'));
  process.on('SIGTERM', () => shutdown('SIGTERM received'));
  process.on('SIGHUP', () => shutdown('SIGHUP received'));
  // Whatever happens, no process of ours outlives us (synchronous SIGKILLs are allowed in an exit handler).
  process.on('exit', () => stack.kill());
  // npm 11 answers SIGTERM by ending itself and its shell without waiting for us: a new parent means ours is gone.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) shutdown('the parent process ended');
  }, 500).unref();
}
