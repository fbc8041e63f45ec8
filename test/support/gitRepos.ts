/**
 * Real git repositories for tests: created from a fixture directory (or empty), reachable as a `file://` URL, with
 * helpers to add commits, branches and tags. git runs with a fixed identity and no user or system config.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { testEnv } from './env';

export interface GitRepo {
  /** Working directory of the repository. */
  dir: string;
  /** `file://` URL to clone it from. */
  url: string;
  /** Writes (string) or deletes (null) files, commits them on the current branch; returns the new commit's sha. */
  commit: (message: string, files: Record<string, string | null>) => string;
  /** Creates a branch at the current commit, or moves an existing one there (and switches to it when `checkout`). */
  branch: (name: string, checkout?: boolean) => void;
  /** Switches to an existing branch. */
  checkout: (name: string) => void;
  /** Creates an annotated tag at the current commit. */
  tag: (name: string) => void;
  /** Sha of the current commit. */
  head: () => string;
  /** Runs any git command in the repository; returns its trimmed stdout. */
  git: (...args: string[]) => string;
}

const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'graphx tests',
  GIT_AUTHOR_EMAIL: 'tests@graphx.invalid',
  GIT_COMMITTER_NAME: 'graphx tests',
  GIT_COMMITTER_EMAIL: 'tests@graphx.invalid',
  LC_ALL: 'C',
};

/**
 * Creates a repository on branch `main` holding a copy of `fixtureDir` (without node_modules, nor what running it
 * locally leaves: `graphx dev`'s .graphx/, Python byte code and egg-info) as its first
 * commit. The repository lives under the test run's directory unless `parentDir` is given.
 */
export function createGitRepo(fixtureDir: string | null, parentDir: string = testEnv.runDir()): GitRepo {
  const dir = path.join(parentDir, `repo-${crypto.randomBytes(4).toString('hex')}`);
  fs.mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: GIT_ENV, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  if (fixtureDir) {
    const left = (part: string) => ['node_modules', '.graphx', '__pycache__'].includes(part) || part.endsWith('.egg-info');
    fs.cpSync(fixtureDir, dir, { recursive: true, filter: (source) => !source.split(path.sep).some(left) });
  }
  git('add', '-A');
  git('commit', '-q', '--allow-empty', '-m', 'initial commit');
  const repo: GitRepo = {
    dir,
    url: `file://${dir}`,
    git,
    commit: (message, files) => {
      for (const [file, content] of Object.entries(files)) {
        const target = path.join(dir, file);
        if (content === null) {
          fs.rmSync(target, { force: true });
        } else {
          fs.mkdirSync(path.dirname(target), { recursive: true });
          fs.writeFileSync(target, content);
        }
      }
      git('add', '-A');
      git('commit', '-q', '--allow-empty', '-m', message);
      return repo.head();
    },
    branch: (name, checkout = false) => {
      // -f/-B: a retried test finds the branch its first attempt made, and starts it again from the same commit.
      if (checkout) git('checkout', '-q', '-B', name);
      else git('branch', '-f', name);
    },
    checkout: (name) => {
      git('checkout', '-q', name);
    },
    tag: (name) => {
      git('tag', '-a', name, '-m', name);
    },
    head: () => git('rev-parse', 'HEAD'),
  };
  return repo;
}
