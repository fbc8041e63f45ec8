/**
 * The command and environment of an app instance (docs/internal-contracts.md, "Rollout → runtime"): the contract's
 * variables, the deployment's secrets and graphx.json `env` — nothing of the control plane's own environment.
 */
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../config';
import { readRepoFile } from '../security/repoFile';
import { minimalPath, statFields } from '@graphx/kit/os/processes';
import type { RevisionSpec } from './revisionSpec';
import { parseEnvFile, readGraphxConfig, type EnvSource } from '@graphx/contract/graphxConfig';
import { INSTANCE_ENV, toInstanceEnv } from '@graphx/contract/instanceEnv';
import { RUNTIME_PROCESS_ENV } from '@graphx/contract/image';

/** How an instance is started; injectable so tests can supervise a small script instead of the runtime. */
export interface InstanceCommand {
  command: string;
  args: string[];
}

/** `node <projectRoot>/bin/graphx.js runtime`. */
export const RUNTIME_COMMAND: InstanceCommand = {
  command: process.execPath,
  args: [path.join(projectRoot, 'bin', 'graphx.js'), 'runtime'],
};

export interface InstanceIdentity {
  port: number;
  databaseUri: string;
  configFile: string;
  /** The revision's clone: the env file must be inside it. */
  repoRoot: string;
  controlPlaneUrl: string;
  serviceToken: string;
}

/**
 * graphx.json `env` through the contract's reader: an object of values, or the path of a dotenv file next to
 * graphx.json. Both files are read through readRepoFile (a regular file inside the repository, size-capped); anything
 * else contributes nothing here (the runtime reports a bad env file itself when it starts).
 */
export function graphxJsonEnv(configFile: string, repoRoot: string): Record<string, string> {
  let env: EnvSource;
  try {
    env = readGraphxConfig(configFile, { unknownKeys: 'warn' }, (file) => readRepoFile(repoRoot, file)).config.env;
  } catch {
    return {};
  }
  if (env.kind === 'values') return env.values;
  if (env.kind !== 'file') return {};
  try {
    return parseEnvFile(readRepoFile(repoRoot, path.resolve(path.dirname(configFile), env.path)));
  } catch {
    return {};
  }
}

/**
 * The whole environment of one instance. Later sources win: what the runtime image sets < graphx.json env < secrets <
 * the contract's variables.
 */
export function instanceEnvironment(spec: RevisionSpec, identity: InstanceIdentity): Record<string, string> {
  const env: Record<string, string> = {
    PATH: minimalPath(),
    ...RUNTIME_PROCESS_ENV,
    ...graphxJsonEnv(identity.configFile, identity.repoRoot),
  };
  for (const secret of spec.secrets) env[secret.name] = secret.value;
  const memoryLimit = spec.sourceConfig.resource_spec?.memory_limit_mb;
  if (typeof memoryLimit === 'number' && memoryLimit > 0) env.NODE_OPTIONS = `--max-old-space-size=${Math.floor(memoryLimit)}`;
  Object.assign(
    env,
    toInstanceEnv({
      port: identity.port,
      host: '127.0.0.1',
      databaseUri: identity.databaseUri,
      configPath: identity.configFile,
      deploymentId: spec.deploymentId,
      revisionId: spec.revisionId,
      tenantId: spec.tenantId,
      controlPlaneUrl: identity.controlPlaneUrl,
      controlPlaneSocket: null,
      serviceToken: identity.serviceToken,
    }),
  );
  return env;
}

/**
 * True when the process `pid` is the instance recorded for (revision, port): after a restart a recorded pid may have
 * been reused by an unrelated process, so adoption checks the process's own environment where /proc allows.
 */
export function processServesInstance(pid: number, revisionId: string, port: number): boolean {
  // No /proc: the health check that follows is the only evidence.
  return environNamesInstance(pid, revisionId, port) ?? true;
}

/** Whether the environment of `pid` names (revision, port); null when it cannot be read. */
function environNamesInstance(pid: number, revisionId: string, port: number): boolean | null {
  let environ: string;
  try {
    environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return null;
  }
  const vars = new Set(environ.split('\0'));
  return vars.has(`${INSTANCE_ENV.revisionId}=${revisionId}`) && vars.has(`${INSTANCE_ENV.port}=${port}`);
}

/**
 * The process group leader that serves the instance (revision, port), found by its environment, or null (none, or no
 * /proc). For a row whose starter died between spawning the process and recording its pid.
 */
export function findInstanceProcess(revisionId: string, port: number): number | null {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return null;
  }
  for (const entry of entries) {
    const fields = statFields(entry);
    // Only a group leader: the app's own children (its Python executor) inherit the same environment.
    if (!fields || Number(fields[2]) !== Number(entry) || fields[0] === 'Z') continue;
    if (environNamesInstance(Number(entry), revisionId, port) === true) return Number(entry);
  }
  return null;
}

export interface ContainerIdentity {
  /** Port the app listens on inside the container (published on the host's 127.0.0.1 only). */
  port: number;
  /** `postgresql://role:password@localhost/db?host=<socket dir>`: PostgreSQL through the mounted socket. */
  databaseUri: string;
  /** Unix socket of the control plane's internal API inside the container. */
  controlPlaneSocket: string;
  serviceToken: string;
  /** The container's memory limit in MB (resource_spec, or the runner's default). */
  memoryMb: number;
  /** True when the image is one graphx built (FROM graphx-runtime: its Node is ours and takes the V8 flag below). */
  builtImage: boolean;
}

/**
 * V8 sizes its young generation from the memory it sees: under a 1 GB cgroup limit it picks 4 MB semi-spaces where the
 * same Node on the host picks 16 MB, and a server allocating per request then scavenges four times as often and
 * promotes more (bench/pipeline measured 20-45% more app CPU per run in the container than as a process). Instances of
 * built images get the host's size back, scaled down for small limits (a young generation is three semi-spaces).
 */
export function semiSpaceMb(memoryMb: number): number {
  return Math.max(1, Math.min(16, Math.floor(memoryMb / 64)));
}

/**
 * The environment of an instance in a container: the same contract, but the app listens on every interface of its
 * own network namespace (the engine publishes the port on 127.0.0.1 only), graphx.json is found from the image's
 * working directory and its `env` applied by the runtime itself, and the database and control plane are sockets.
 */
export function containerEnvironment(spec: RevisionSpec, identity: ContainerIdentity): Record<string, string> {
  const env: Record<string, string> = {};
  for (const secret of spec.secrets) env[secret.name] = secret.value;
  const memoryLimit = spec.sourceConfig.resource_spec?.memory_limit_mb;
  const nodeOptions = identity.builtImage ? [`--max-semi-space-size=${semiSpaceMb(identity.memoryMb)}`] : [];
  if (typeof memoryLimit === 'number' && memoryLimit > 0) nodeOptions.push(`--max-old-space-size=${Math.floor(memoryLimit)}`);
  if (nodeOptions.length > 0) env.NODE_OPTIONS = nodeOptions.join(' ');
  Object.assign(
    env,
    toInstanceEnv({
      port: identity.port,
      host: '0.0.0.0',
      databaseUri: identity.databaseUri,
      configPath: spec.graphxConfigPath,
      deploymentId: spec.deploymentId,
      revisionId: spec.revisionId,
      tenantId: spec.tenantId,
      // The host part is never dialled: requests go through the control-plane socket.
      controlPlaneUrl: 'http://control-plane',
      controlPlaneSocket: identity.controlPlaneSocket,
      serviceToken: identity.serviceToken,
    }),
  );
  return env;
}
