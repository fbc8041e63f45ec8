import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readRepoFile, RepoFileError } from '../../src/security/repoFile';
import { graphxJsonEnv } from '../../src/pipeline/runtimeEnv';

describe('reading tenant-chosen files from the control plane', () => {
  let dir: string;
  let repo: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-repofile-'));
    repo = path.join(dir, 'src');
    fs.mkdirSync(repo);
    fs.writeFileSync(path.join(dir, 'secret-key'), 'control-plane-secret');
  });

  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads a regular file inside the repository', () => {
    fs.writeFileSync(path.join(repo, '.env'), 'A=1\n');
    expect(readRepoFile(repo, '.env')).toBe('A=1\n');
  });

  it.each([
    ['a path leaving the repository', () => '../secret-key', /points outside the repository/],
    [
      'a symlink to a file outside the repository',
      () => {
        fs.symlinkSync(path.join(dir, 'secret-key'), path.join(repo, 'link.env'));
        return 'link.env';
      },
      /points outside the repository/,
    ],
    ['a missing file', () => 'nope.env', /was not found in the repository/],
    [
      'a FIFO (would block a reader forever)',
      () => {
        execFileSync('mkfifo', [path.join(repo, 'fifo.env')]);
        return 'fifo.env';
      },
      /not a regular file/,
    ],
    [
      'a directory',
      () => {
        fs.mkdirSync(path.join(repo, 'dir.env'));
        return 'dir.env';
      },
      /not a regular file/,
    ],
    [
      'a file over the size cap',
      () => {
        fs.writeFileSync(path.join(repo, 'big.env'), Buffer.alloc(300 * 1024, 'a'));
        return 'big.env';
      },
      /larger than/,
    ],
  ])('refuses %s', (_label, arrange, message) => {
    const file = arrange();
    expect(() => readRepoFile(repo, file)).toThrow(RepoFileError);
    expect(() => readRepoFile(repo, file)).toThrow(message);
  });

  it('gives an app no environment from an env file outside its repository, and its own env file otherwise', () => {
    const configFile = path.join(repo, 'graphx.json');
    fs.writeFileSync(configFile, JSON.stringify({ graphs: { a: './a.ts:graph' }, env: '../secret-key' }));
    expect(graphxJsonEnv(configFile, repo)).toEqual({});
    fs.writeFileSync(path.join(dir, 'leak.env'), 'SECRET=control-plane-secret\n');
    fs.symlinkSync(path.join(dir, 'leak.env'), path.join(repo, 'sneaky.env'));
    fs.writeFileSync(configFile, JSON.stringify({ graphs: { a: './a.ts:graph' }, env: 'sneaky.env' }));
    expect(graphxJsonEnv(configFile, repo)).toEqual({});
    fs.writeFileSync(path.join(repo, 'own.env'), 'MODEL=small\n');
    fs.writeFileSync(configFile, JSON.stringify({ graphs: { a: './a.ts:graph' }, env: 'own.env' }));
    expect(graphxJsonEnv(configFile, repo)).toEqual({ MODEL: 'small' });
  });
});
