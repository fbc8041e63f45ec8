/**
 * Embedded PostgreSQL as root under a private directory, as in a container: `GRAPHX_DATA_DIR=$(mktemp -d)` (0700) and
 * `graphx dev --config /root/app/graphx.json` (a data dir inside a 0700 parent). PostgreSQL runs as the postgres user,
 * which cannot traverse those; the cluster is kept where it can, named in `<dataDir>/pg.location`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '@graphx/kit/os/embeddedPostgres';
import { removeRelocatedCluster } from '@graphx/kit/os/postgresPlacement';

const asRoot = process.getuid?.() === 0 ? it : it.skip;
const cleanups: Array<() => void> = [];
afterAll(() => cleanups.forEach((cleanup) => cleanup()));

function privateDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-private-'));
  expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
  cleanups.push(() => {
    removeRelocatedCluster(dir);
    removeRelocatedCluster(path.join(dir, 'app', '.graphx'));
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

async function serves(connectionString: string): Promise<number> {
  const client = new Client({ connectionString });
  await client.connect();
  try {
    return (await client.query('SELECT 1 AS one')).rows[0].one;
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL as root', () => {
  asRoot.each([
    ['a 0700 data dir (mktemp -d)', (dir: string) => dir],
    ['a data dir inside a 0700 parent (graphx dev under /root/app)', (dir: string) => path.join(dir, 'app', '.graphx')],
  ])(
    'serves from %s and starts again on the same cluster',
    async (_label, dataDirOf) => {
      const dataDir = dataDirOf(privateDir());
      const first = await startEmbeddedPostgres(dataDir, 'graphx', { supervise: false });
      try {
        expect(await serves(first.connectionString('graphx'))).toBe(1);
        const clusterDir = fs.readFileSync(path.join(dataDir, 'pg.location'), 'utf8').trim();
        expect(fs.existsSync(path.join(clusterDir, 'PG_VERSION'))).toBe(true);
        const client = new Client({ connectionString: first.connectionString('graphx') });
        await client.connect();
        await client.query('CREATE TABLE kept (id int)');
        await client.end();
      } finally {
        await first.stop();
      }
      const second = await startEmbeddedPostgres(dataDir, 'graphx', { supervise: false });
      try {
        const client = new Client({ connectionString: second.connectionString('graphx') });
        await client.connect();
        expect((await client.query("SELECT to_regclass('kept') IS NOT NULL AS kept")).rows[0].kept).toBe(true);
        await client.end();
      } finally {
        await second.stop();
      }
    },
    120_000,
  );

  it('gives each data dir its own superuser password, kept 0600 beside it, and the old constant no longer logs in', async () => {
    const first = privateDir();
    const second = privateDir();
    const a = await startEmbeddedPostgres(first, 'graphx', { supervise: false });
    const b = await startEmbeddedPostgres(second, 'graphx', { supervise: false });
    try {
      const passwordOf = (dir: string) => fs.readFileSync(path.join(dir, 'pg.password'), 'utf8').trim();
      expect(passwordOf(first)).not.toEqual(passwordOf(second));
      expect(passwordOf(first).length).toBeGreaterThanOrEqual(24);
      expect(fs.statSync(path.join(first, 'pg.password')).mode & 0o777).toBe(0o600);
      expect(a.connectionString('graphx')).toContain(encodeURIComponent(passwordOf(first)));
      const port = new URL(a.connectionString('graphx')).port;
      await expect(serves(`postgres://postgres:graphx-embedded@127.0.0.1:${port}/graphx`)).rejects.toThrow(/password/);
      expect(await serves(a.connectionString('graphx'))).toBe(1);
      expect(await serves(b.connectionString('graphx'))).toBe(1);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 120_000);
});
