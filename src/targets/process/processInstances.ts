/**
 * App instances as detached process groups. An instance writes its output to files under
 * `$dataDir/instances/`, not to a pipe of ours, so it survives the death of the process that started it; whichever
 * process supervises it copies new output into `app_logs`, guarded by the offsets stored on its row so two copiers
 * never duplicate a line. A row is written before the process starts, so a crash leaves a record to clean up.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { GraphxConfig } from '../../config';
import type { Db } from '../../db/knex';
import { hashToken, type SecretBox } from '../../security/secretBox';
import { findFreePort } from '@graphx/kit/net/ports';
import { deploymentDatabaseUri } from '../../pipeline/deploymentDatabase';
import { findInstanceProcess, instanceEnvironment, processServesInstance, type InstanceCommand } from '../../pipeline/runtimeEnv';
import { trackGroup, untrackGroup } from '@graphx/kit/os/ownedGroups';
import { isProcessAlive, stopGroup } from '@graphx/kit/os/processes';
import { builtPython } from '../../pipeline/builtPython';
import { buildPaths, graphxConfigFile, type RevisionSpec } from '../../pipeline/revisionSpec';
import { InstanceStore, type AppLogLine, type InstanceRow, type OutputCursor } from '../../db/repositories/instances';
import type { InstanceRunner } from '../gateway/instanceRunner';
import { SupervisedInstances } from '../gateway/supervisedInstances';

const MAX_COPY_BYTES = 256 * 1024;

export interface InstanceDeps {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  instanceCommand: InstanceCommand;
  controlPlaneUrl: () => string;
  /** Called when a supervised instance's process is found dead (not stopped by us). */
  onDeath?: (row: InstanceRow) => void;
}

/** Starts instances, copies their output, stops them. Tracks the ones this process supervises. */
export class ProcessInstances extends SupervisedInstances implements InstanceRunner {
  // Output is copied every 500 ms; a process found dead (checked every 2 s) is reported once.
  constructor(private readonly deps: InstanceDeps) {
    super({ tickMs: 500, deathCheckTicks: 4 }, deps.onDeath);
  }

  /** Records, then spawns, one new instance of the revision on a free port. */
  async start(spec: RevisionSpec): Promise<InstanceRow> {
    const { config, db, secretBox } = this.deps;
    const configFile = graphxConfigFile(config.dataDir, spec);
    if (!configFile) throw new Error(`graphx_config_path ${spec.graphxConfigPath} is outside the repository.`);
    const id = crypto.randomUUID();
    const logDir = path.join(config.dataDir, 'instances');
    fs.mkdirSync(logDir, { recursive: true });
    const serviceToken = `gxs_${crypto.randomBytes(32).toString('base64url')}`;
    const serviceTokenId = crypto.randomUUID();
    const port = await findFreePort();
    const row: InstanceRow = {
      id,
      deployment_id: spec.deploymentId,
      revision_id: spec.revisionId,
      port,
      pid: null,
      status: 'starting',
      service_token_id: serviceTokenId,
      stdout_path: path.join(logDir, `${id}.out.log`),
      stderr_path: path.join(logDir, `${id}.err.log`),
      container_name: null,
    };
    await new InstanceStore(db).create(row, hashToken(serviceToken));
    const env = instanceEnvironment(spec, {
      port,
      configFile,
      repoRoot: buildPaths(config.dataDir, spec.revisionId).src,
      databaseUri: deploymentDatabaseUri(config, db, secretBox, spec.deploymentId),
      controlPlaneUrl: this.deps.controlPlaneUrl(),
      serviceToken,
    });
    // The environment the revision's BUILD made: the app starts its Python executor with it and installs nothing.
    const python = builtPython(config.dataDir, spec.revisionId);
    if (python) env.GRAPHX_PYTHON = python;
    const stdout = fs.openSync(row.stdout_path!, 'a');
    const stderr = fs.openSync(row.stderr_path!, 'a');
    try {
      const child = spawn(this.deps.instanceCommand.command, this.deps.instanceCommand.args, {
        cwd: path.dirname(configFile),
        env,
        detached: true,
        stdio: ['ignore', stdout, stderr],
      });
      // An exit is noticed by polling the pid like for adopted instances; the handle must not keep us alive.
      child.on('error', () => {});
      child.unref();
      row.pid = child.pid ?? null;
      trackGroup(child.pid);
    } finally {
      fs.closeSync(stdout);
      fs.closeSync(stderr);
    }
    await new InstanceStore(db).setPid(id, row.pid);
    this.supervise(row);
    return row;
  }

  /** Takes over copying the output of an instance another (maybe dead) process started. */
  override supervise(row: InstanceRow): void {
    trackGroup(row.pid ?? undefined);
    super.supervise(row);
  }

  async hurryStopping(graceMs: number): Promise<void> {
    await Promise.all(this.stoppingRows().map((row) => (row.pid ? stopGroup(row.pid, graceMs) : Promise.resolve())));
  }

  /** The recorded pid lives and its environment names this revision and port (a pid may be reused after a restart). */
  async adoptable(row: InstanceRow, spec: RevisionSpec): Promise<boolean> {
    await this.findUnrecordedPid(row);
    return !!row.pid && isProcessAlive(row.pid) && processServesInstance(row.pid, spec.revisionId, row.port);
  }

  /**
   * A row without a pid whose process lives: its starter was killed between spawning and recording the pid (a worker
   * SIGKILLed in DEPLOYING). The process is found by its environment and recorded, so it is adopted or stopped
   * like any other instead of serving on unseen.
   */
  private async findUnrecordedPid(row: InstanceRow): Promise<void> {
    if (row.pid) return;
    const pid = findInstanceProcess(row.revision_id, row.port);
    if (!pid) return;
    row.pid = pid;
    await new InstanceStore(this.deps.db).setPid(row.id, pid);
  }

  async isAlive(row: InstanceRow): Promise<boolean> {
    return !!row.pid && isProcessAlive(row.pid);
  }

  async ownsRow(row: InstanceRow): Promise<boolean> {
    return row.stdout_path?.startsWith(path.join(this.deps.config.dataDir, 'instances') + path.sep) === true;
  }

  async describeDeath(row: InstanceRow): Promise<string> {
    return `Instance on port ${row.port} (pid ${row.pid}) exited; starting a replacement.`;
  }

  /** Only builds in this data dir can run here; another stack sharing the database keeps its own deployments. */
  async canRun(spec: RevisionSpec): Promise<boolean> {
    return fs.existsSync(buildPaths(this.deps.config.dataDir, spec.revisionId).src);
  }

  /** True when the instance's process group lives and `GET /ok` answers 200. */
  async isHealthy(row: Pick<InstanceRow, 'pid' | 'port'>): Promise<boolean> {
    return !!row.pid && isProcessAlive(row.pid) && (await checkOk(row.port));
  }

  /**
   * Stops an instance: SIGTERM to its group (the runtime lets open streams finish), SIGKILL after `graceMs`. Then
   * copies its last output, marks it stopped and deletes its service token.
   */
  async stop(row: InstanceRow, graceMs: number, onWait?: () => void): Promise<void> {
    await this.findUnrecordedPid(row);
    await this.haltAndCopy(row, async () => {
      try {
        if (row.pid) await stopGroup(row.pid, graceMs, onWait);
      } finally {
        untrackGroup(row.pid);
      }
    });
    await new InstanceStore(this.deps.db).markStopped(row);
  }

  /** The last lines the instance wrote (stdout, then stderr), for a failure message. */
  async lastLines(row: InstanceRow, count = 10): Promise<string[]> {
    const lines = [...tailOfFile(row.stdout_path!), ...tailOfFile(row.stderr_path!)];
    return lines.filter((line) => line.trim() !== '').slice(-count);
  }

  protected async hasDied(row: InstanceRow): Promise<boolean> {
    return !!row.pid && !isProcessAlive(row.pid);
  }

  /** Copies new complete lines of the instance's output files (byte offsets on its row). */
  protected async copyOutputNow(row: InstanceRow): Promise<void> {
    const files = { stdout: row.stdout_path!, stderr: row.stderr_path! };
    if (fileSize(files.stdout) === 0 && fileSize(files.stderr) === 0) return;
    await new InstanceStore(this.deps.db).copyOutput(row, async (cursor) => {
      const lines: AppLogLine[] = [];
      const advanced: Partial<OutputCursor> = {};
      const out = readCompleteLines(files.stdout, cursor.stdout_offset);
      if (out) {
        advanced.stdout_offset = cursor.stdout_offset + out.bytes;
        lines.push(...out.lines.map((message) => ({ level: 'info' as const, message })));
      }
      const err = readCompleteLines(files.stderr, cursor.stderr_offset);
      if (err) {
        advanced.stderr_offset = cursor.stderr_offset + err.bytes;
        lines.push(...err.lines.map((message) => ({ level: 'error' as const, message })));
      }
      return { lines, cursor: advanced };
    });
  }
}

/** GET /ok answers 200 within a second. */
export function checkOk(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/ok', timeout: 1000, agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** New complete lines after `offset` (a partial last line waits for its newline), at most MAX_COPY_BYTES. */
function readCompleteLines(file: string, offset: number): { lines: string[]; bytes: number } | null {
  const size = fileSize(file);
  if (size <= offset) return null;
  const length = Math.min(size - offset, MAX_COPY_BYTES);
  const buffer = Buffer.alloc(length);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, buffer, 0, length, offset);
  } finally {
    fs.closeSync(fd);
  }
  let end = buffer.lastIndexOf(0x0a) + 1;
  // A single line longer than the window is cut rather than blocking the copy forever.
  if (end === 0 && length === MAX_COPY_BYTES) end = length;
  if (end === 0) return null;
  const lines = buffer.subarray(0, end).toString('utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return { lines: lines.map((line) => line.replace(/\r$/, '')), bytes: end };
}

function tailOfFile(file: string, bytes = 8192): string[] {
  const size = fileSize(file);
  if (size === 0) return [];
  const start = Math.max(0, size - bytes);
  const buffer = Buffer.alloc(size - start);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, buffer, 0, buffer.length, start);
  } finally {
    fs.closeSync(fd);
  }
  return buffer.toString('utf8').split('\n');
}
