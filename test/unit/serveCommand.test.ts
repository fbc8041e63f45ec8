/**
 * `graphx serve` (the image's command) never falls back to the development stack: without an external PostgreSQL and
 * Temporal it stops at once with a usage exit, instead of starting an embedded database inside a container.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const GRAPHX = path.join(__dirname, '..', '..', 'bin', 'graphx.js');

describe('graphx serve', () => {
  it('refuses to start without DATABASE_URL and TEMPORAL_ADDRESS, naming both, with exit code 2', () => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', GRAPHX_DATA_DIR: '/nonexistent' };
    const result = spawnSync(process.execPath, [GRAPHX, 'serve'], { env, encoding: 'utf8', timeout: 30_000 });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('set DATABASE_URL and TEMPORAL_ADDRESS');
  });

  it('refuses when only Temporal is missing', () => {
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      GRAPHX_DATA_DIR: '/nonexistent',
      DATABASE_URL: 'postgres://graphx@127.0.0.1:1/graphx',
    };
    const result = spawnSync(process.execPath, [GRAPHX, 'serve'], { env, encoding: 'utf8', timeout: 30_000 });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('set TEMPORAL_ADDRESS (or use start)');
  });
});
