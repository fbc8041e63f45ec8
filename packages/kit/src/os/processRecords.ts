/**
 * What `graphx start` leaves in its data dir so that the next start can find it: one record per process it runs
 * (`<dataDir>/run/<role>.json`: pid and the process's start time, so a reused pid is never mistaken for ours). A start
 * after a crash (SIGKILL, power loss of a laptop's session) ends what the dead predecessor left running before it
 * starts its own: PostgreSQL would otherwise refuse the cluster ("lock file postmaster.pid already exists") and the
 * old Temporal dev server and worker would hold their ports and keep running pipelines. App instances are not ended
 * here: the new worker adopts them (restoreActiveInstances), and the podman service is taken over by the engine.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors';
import { delay, isProcessAlive } from './processes';

export type RecordedRole = 'stack' | 'postgres' | 'temporal' | 'worker';

interface ProcessRecord {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
  startTime: string | null;
}

function recordFile(dataDir: string, role: RecordedRole): string {
  return path.join(dataDir, 'run', `${role}.json`);
}

/** The start time of `pid` (/proc), or null when it is gone or there is no /proc. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Records the process now playing `role` for this data dir (called at each (re)start of that process). */
export function recordProcess(dataDir: string, role: RecordedRole, pid: number | undefined): void {
  if (!pid) return;
  const file = recordFile(dataDir, role);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, JSON.stringify({ pid, startTime: startTimeOf(pid) } satisfies ProcessRecord), { mode: 0o600 });
}

/** Forgets the record of `role` (its process was stopped in order). */
export function forgetProcess(dataDir: string, role: RecordedRole): void {
  fs.rmSync(recordFile(dataDir, role), { force: true });
}

/** The live process a record names, or null (no record, dead, or the pid now belongs to another process). */
function recordedLiveProcess(dataDir: string, role: RecordedRole): number | null {
  let record: ProcessRecord;
  try {
    record = JSON.parse(fs.readFileSync(recordFile(dataDir, role), 'utf8')) as ProcessRecord;
  } catch {
    return null;
  }
  if (!isProcessAlive(record.pid)) return null;
  return record.startTime === null || startTimeOf(record.pid) === record.startTime ? record.pid : null;
}

/**
 * The postmaster a cluster's `postmaster.pid` names, when it is alive and runs that cluster (an older graphx left it
 * without a record, or the record is gone with a wiped run dir).
 */
function livePostmaster(clusterDir: string): number | null {
  try {
    const pid = Number(fs.readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (!isProcessAlive(pid)) return null;
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(clusterDir) ? pid : null;
  } catch {
    return null;
  }
}

/** `signal` to the process group `pid` leads (each of ours leads one), else to the process; then SIGKILL after 10 s. */
async function endProcess(pid: number, signal: NodeJS.Signals): Promise<void> {
  const send = (which: NodeJS.Signals) => {
    try {
      process.kill(-pid, which);
    } catch {
      try {
        process.kill(pid, which);
      } catch {
        // Gone.
      }
    }
  };
  send(signal);
  const deadline = Date.now() + 10_000;
  while (isProcessAlive(pid) && Date.now() < deadline) await delay(100);
  if (isProcessAlive(pid)) send('SIGKILL');
  while (isProcessAlive(pid) && Date.now() < deadline + 5000) await delay(100);
}

/**
 * Before a start: refuses when a live `graphx start` already serves this data dir, else ends what a dead one left
 * (its worker, Temporal dev server and PostgreSQL, in that order) and records this process as the stack. Returns one
 * line per process ended, for the log.
 * @throws ConfigError naming the live predecessor.
 */
export async function takeOverDataDir(dataDir: string, clusterDir: string | null): Promise<string[]> {
  const live = recordedLiveProcess(dataDir, 'stack');
  if (live !== null && live !== process.pid) {
    throw new ConfigError(
      `Another graphx start (pid ${live}) is running on ${dataDir}: stop it first, or use another GRAPHX_DATA_DIR.`,
    );
  }
  const ended: string[] = [];
  const steps: Array<[RecordedRole, NodeJS.Signals, string]> = [
    ['worker', 'SIGTERM', 'worker'],
    ['temporal', 'SIGTERM', 'Temporal dev server'],
    ['postgres', 'SIGINT', 'PostgreSQL'],
  ];
  for (const [role, signal, name] of steps) {
    const pid =
      role === 'postgres' && clusterDir
        ? (livePostmaster(clusterDir) ?? recordedLiveProcess(dataDir, role))
        : recordedLiveProcess(dataDir, role);
    if (pid !== null) {
      await endProcess(pid, signal);
      ended.push(`${name} (pid ${pid})`);
    }
    forgetProcess(dataDir, role);
  }
  recordProcess(dataDir, 'stack', process.pid);
  return ended;
}

/**
 * SIGKILL, synchronously, to every process of this data dir: the stack's own (they carry GRAPHX_DATA_DIR), the apps of
 * the process runner (their graphx.json is under `<dataDir>/builds`), the engine and its container monitors (their
 * command lines name the data dir). The last resort of a stack told to stop at once (a second Ctrl-C): its worker may
 * have started apps this process never saw.
 */
export function killDataDirProcesses(dataDir: string): void {
  const marks = [`GRAPHX_DATA_DIR=${dataDir}`, `GRAPHX_CONFIG_PATH=${path.join(dataDir, 'builds')}${path.sep}`];
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const ours = environ.some((entry) => marks.some((mark) => entry.startsWith(mark))) || cmdline.includes(`${dataDir}/`);
      if (ours) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Gone, or not ours to read.
    }
  }
}
