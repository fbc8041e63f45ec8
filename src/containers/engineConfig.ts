/**
 * The container engine settings graphx owns: a `containers.conf` and a `storage.conf` written under the data dir and
 * handed to podman through CONTAINERS_CONF / CONTAINERS_STORAGE_CONF, so nothing depends on (or changes) the host's
 * /etc/containers. The values are facts about the machines we run on:
 * - runc with the cgroupfs manager: crun fails on hybrid cgroup hosts, and there may be no systemd to talk to;
 * - explicit ulimits below the host's hard limits: podman's defaults (nofile 1048576) make setrlimit fail where the
 *   hard limit is lower, and every container start fails with "Operation not permitted";
 * - file-based events and no journald, for the same reason (no systemd);
 * - registries on loopback (127.0.0.1, localhost, any port) are plain HTTP: traffic that never leaves the machine
 *   gains nothing from TLS, and a local registry (tests, a self-hosted mirror) rarely has a certificate. Docker Engine
 *   treats 127.0.0.0/8 the same way by default. Short names resolve on docker.io, as with Docker.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface EngineConfigFiles {
  /** Directory holding the files and the engine's socket. */
  dir: string;
  /** The image and container store (its `graph/` is the graphroot). */
  storeDir: string;
  containersConf: string;
  storageConf: string;
  registriesConf: string;
  /** Environment for every podman process graphx starts. */
  env: Record<string, string>;
  /** The container ulimits written, for clients that must repeat them per container (see DockerEngine). */
  ulimits: ContainerUlimit[];
}

export interface ContainerUlimit {
  name: 'nofile' | 'nproc';
  soft: number;
  hard: number;
}

export interface EngineConfigOptions {
  /** Where graphx keeps its engine files (`<dataDir>/containers`). */
  dir: string;
  /**
   * Image and container store (graphroot). Several data dirs may share one (tests do, so the runtime image is built
   * once); containers/storage locks it for concurrent engines.
   */
  storeDir: string;
  /** Soft and hard limits for open files and processes inside containers; clamped below the host's hard limits. */
  nofile?: [number, number];
  nproc?: [number, number];
}

/** Writes (or rewrites, idempotently) the engine's configuration files and returns where they are. */
export function writeEngineConfig(options: EngineConfigOptions): EngineConfigFiles {
  fs.mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  fs.mkdirSync(options.storeDir, { recursive: true, mode: 0o700 });
  const nofile = clampLimits(options.nofile ?? [1024, 4096], hostHardLimit('Max open files'));
  const nproc = clampLimits(options.nproc ?? [1024, 2048], hostHardLimit('Max processes'));
  const containersConf = path.join(options.dir, 'containers.conf');
  const storageConf = path.join(options.dir, 'storage.conf');
  const registriesConf = path.join(options.dir, 'registries.conf');
  writeIfChanged(
    containersConf,
    [
      '# Written by graphx (src/containers/engineConfig.ts); edits are overwritten at start.',
      '[containers]',
      `default_ulimits = ["nofile=${nofile[0]}:${nofile[1]}", "nproc=${nproc[0]}:${nproc[1]}"]`,
      'log_driver = "k8s-file"',
      '',
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      `events_logfile_path = ${toml(path.join(options.dir, 'events.log'))}`,
      '',
    ].join('\n'),
  );
  writeIfChanged(
    storageConf,
    [
      '# Written by graphx (src/containers/engineConfig.ts).',
      '[storage]',
      'driver = "overlay"',
      `graphroot = ${toml(path.join(options.storeDir, 'graph'))}`,
      `runroot = ${toml(path.join(options.storeDir, 'run'))}`,
      '',
    ].join('\n'),
  );
  writeIfChanged(
    registriesConf,
    [
      '# Written by graphx (src/containers/engineConfig.ts).',
      'unqualified-search-registries = ["docker.io"]',
      ...['127.0.0.1', 'localhost'].flatMap((host) => ['', '[[registry]]', `location = ${toml(host)}`, 'insecure = true']),
      '',
    ].join('\n'),
  );
  return {
    dir: options.dir,
    storeDir: path.resolve(options.storeDir),
    containersConf,
    storageConf,
    registriesConf,
    env: { CONTAINERS_CONF: containersConf, CONTAINERS_STORAGE_CONF: storageConf, CONTAINERS_REGISTRIES_CONF: registriesConf },
    ulimits: [
      { name: 'nofile', soft: nofile[0], hard: nofile[1] },
      { name: 'nproc', soft: nproc[0], hard: nproc[1] },
    ],
  };
}

/** Keeps soft ≤ hard ≤ the host's hard limit (a limit above it cannot be set by a container's init). */
export function clampLimits([soft, hard]: [number, number], hostHard: number | null): [number, number] {
  const cappedHard = hostHard === null ? hard : Math.min(hard, hostHard);
  return [Math.min(soft, cappedHard), cappedHard];
}

/** The hard limit named `label` in /proc/self/limits; null when unknown or unlimited. */
function hostHardLimit(label: string): number | null {
  try {
    const line = fs
      .readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((row) => row.startsWith(label));
    const hard = line?.slice(label.length).trim().split(/\s+/)[1];
    return hard && /^\d+$/.test(hard) ? Number(hard) : null;
  } catch {
    return null;
  }
}

function toml(value: string): string {
  return JSON.stringify(value);
}

/** Rewriting an unchanged file would still be harmless; skipping it keeps a running engine's mtime checks quiet. */
function writeIfChanged(file: string, content: string): void {
  if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === content) return;
  fs.writeFileSync(file, content, { mode: 0o600 });
}
