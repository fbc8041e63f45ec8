/**
 * The process runner's shared Python environments are removed once no build uses them: after a deployment's teardown
 * the disk they took comes back, while an environment another revision runs with, or one a build may be using right
 * now, stays. Real directories in a temp data dir.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { prunePythonEnvironments } from '../../src/builders/host/pythonEnvPruning';
import { buildIntoCache } from '@graphx/runtime/python/pythonRequirements';

const HOUR = 60 * 60 * 1000;

describe("pruning the process runner's Python environments", () => {
  let dataDir: string;
  const envsDir = () => path.join(dataDir, 'python-envs');
  const makeEnv = async (digest: string, ageMs: number) => {
    const { directory } = await buildIntoCache(envsDir(), digest, async (building) => {
      fs.mkdirSync(path.join(building, 'bin'), { recursive: true });
      fs.writeFileSync(path.join(building, 'bin', 'python'), '');
    });
    const then = new Date(Date.now() - ageMs);
    fs.utimesSync(path.join(directory, '.complete'), then, then);
    return directory;
  };
  const recordBuild = (revision: string, envDir: string) => {
    fs.mkdirSync(path.join(dataDir, 'builds', revision), { recursive: true });
    fs.writeFileSync(
      path.join(dataDir, 'builds', revision, 'python-env.json'),
      JSON.stringify({ python: path.join(envDir, 'bin', 'python') }),
    );
  };

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-prune-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('removes what only the deleted revisions used, keeps what another build runs with and what was used lately', async () => {
    recordBuild('kept-revision', await makeEnv('shared', 5 * HOUR));
    recordBuild('deleted-revision', path.join(envsDir(), 'shared'));
    recordBuild('deleted-revision-2', await makeEnv('only-deleted', 5 * HOUR));
    await makeEnv('recent', 10 * 60 * 1000);
    fs.mkdirSync(path.join(envsDir(), 'dead.tmp-1234'));
    const old = new Date(Date.now() - 5 * HOUR);
    fs.utimesSync(path.join(envsDir(), 'dead.tmp-1234'), old, old);

    const removed = prunePythonEnvironments(dataDir, {
      graceMs: HOUR,
      exceptRevisions: ['deleted-revision', 'deleted-revision-2'],
    });

    expect(removed.sort()).toEqual(['dead.tmp-1234', 'only-deleted']);
    expect(fs.readdirSync(envsDir()).sort()).toEqual(['recent', 'shared']);
  });

  it('counts a reuse as a use: an old environment a build just found in the cache is kept', async () => {
    await makeEnv('reused', 5 * HOUR);
    const { built } = await buildIntoCache(envsDir(), 'reused', async () => {
      throw new Error('must not build again');
    });
    expect(built).toBe(false);
    expect(prunePythonEnvironments(dataDir, { graceMs: HOUR })).toEqual([]);
    expect(fs.existsSync(path.join(envsDir(), 'reused', 'bin', 'python'))).toBe(true);
  });

  it('does nothing without a python-envs folder (no Python app was ever built)', () => {
    expect(prunePythonEnvironments(dataDir, { graceMs: HOUR })).toEqual([]);
  });
});
