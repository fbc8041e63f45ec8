/** `graphx dev --config missing.json` says so before any side effect: no PostgreSQL cluster is initialised for it. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { makeDataDir } from '../../../../test/support/env';

test('graphx dev with a missing config file fails naming it and creates no .graphx cluster next to it', () => {
  const dir = makeDataDir('dev-missing');
  const missing = path.join(dir, 'missing.json');
  const result = spawnSync(
    process.execPath,
    [path.resolve(__dirname, '..', '..', '..', '..', 'bin', 'graphx.js'), 'dev', '--config', missing],
    {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      timeout: 60_000,
    },
  );
  expect(result.status).not.toBe(0);
  expect(result.stderr).toContain(`Cannot read ${missing}`);
  expect(fs.existsSync(path.join(dir, '.graphx'))).toBe(false);
}, 70_000);
