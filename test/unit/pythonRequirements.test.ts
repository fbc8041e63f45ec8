/**
 * graphx.json `dependencies` against the packages the Python executor pins: a requirement the pin satisfies is
 * accepted (pip then installs the pin), one that would replace it, a URL for it, or a pip option fails naming the key.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkPythonDependencies, reservedRequirement } from '@graphx/runtime/python/pythonRequirements';
import { UV_PROJECT_HELPER, uvProjectRoot } from '@graphx/runtime/python/uvProject';
import { spawnSync } from 'node:child_process';

const pins = new Map([
  ['langgraph', '1.2.24'],
  ['langgraph-sdk', '0.4.14'],
]);

describe('Python dependencies and the server’s pinned packages', () => {
  it.each([
    'langgraph',
    'langgraph>=1.0',
    'LangGraph ~=1.2',
    'langgraph>=1,<2',
    'langgraph==1.2.*',
    'langgraph-sdk!=0.3.0',
    'requests==2.0',
  ])('accepts %s', (requirement) => expect(reservedRequirement(requirement, pins)).toBeNull());

  it.each([
    'langgraph==0.2.0',
    'langgraph<1',
    'langgraph_sdk>=0.5',
    'langgraph @ git+https://example.com/langgraph',
    'langgraph-api',
  ])('refuses %s', (requirement) => expect(reservedRequirement(requirement, pins)).not.toBeNull());

  it('names the key, the requirement and the pinned version when it refuses', () => {
    const appDir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-py-deps-'));
    try {
      expect(() => checkPythonDependencies(['.', 'langgraph==0.2.0'], appDir)).toThrow(
        /^graphx\.json "dependencies": "langgraph==0\.2\.0" is reserved: the server relies on langgraph \d+\.\d+\.\d+/,
      );
      expect(() => checkPythonDependencies(['--index-url=https://example.com/simple'], appDir)).toThrow(
        /"--index-url=https:\/\/example\.com\/simple" is a pip option, not a requirement; use "pip_config_file"/,
      );
      expect(() => checkPythonDependencies(['../elsewhere'], appDir)).toThrow(
        /"\.\.\/elsewhere" is outside the application's folder/,
      );
    } finally {
      fs.rmSync(appDir, { recursive: true, force: true });
    }
  });
});

describe('graphx.json "source": {"kind": "uv"} and its root', () => {
  it('takes a root inside the repository holding pyproject.toml and uv.lock; refuses one outside it, through a link too', () => {
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-uv-root-'));
    try {
      const app = path.join(repo, 'apps', 'agent');
      fs.mkdirSync(app, { recursive: true });
      for (const file of ['pyproject.toml', 'uv.lock']) fs.writeFileSync(path.join(repo, file), '');
      const source = (root: string) => ({ kind: 'uv' as const, root, package: null });
      expect(uvProjectRoot(source('../..'), app, repo)).toBe(repo);
      expect(() => uvProjectRoot(source('../../..'), app, repo)).toThrow(
        'graphx.json "source.root" "../../.." is outside the repository.',
      );
      fs.symlinkSync(os.tmpdir(), path.join(app, 'elsewhere'));
      expect(() => uvProjectRoot(source('elsewhere'), app, repo)).toThrow(/"source.root" "elsewhere" is outside the repository/);
      expect(() => uvProjectRoot(source('.'), app, repo)).toThrow(
        'graphx.json "source": no pyproject.toml at "source.root" "." (apps/agent/pyproject.toml in the repository); run `uv lock` there and commit uv.lock.',
      );
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });
});

describe("uv.lock's local packages (uv_project.py, before uv runs)", () => {
  /** The helper on a project whose uv.lock has one path source, vendor/probe; uv is /bin/false, so nothing installs. */
  const helper = (probeFiles: Record<string, string>) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-uv-local-'));
    try {
      const lock = 'version = 1\n[[package]]\nname = "probe"\nversion = "0.0.1"\nsource = { directory = "vendor/probe" }\n';
      const files = { 'pyproject.toml': '[project]\nname = "app"\nversion = "1"\n', 'uv.lock': lock, ...probeFiles };
      for (const [file, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        fs.writeFileSync(path.join(root, file), text);
      }
      const args = [UV_PROJECT_HELPER, '--uv', '/bin/false', '--root', root, '--pins', '/dev/null', '--check-only'];
      const result = spawnSync('python3', args, { encoding: 'utf8' });
      return { status: result.status, output: `${result.stdout}${result.stderr}` };
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  };
  const refusal = (found: string) =>
    `graphx.json "source": uv.lock's local package probe (vendor/probe) has no static dependencies: ${found}. uv would build it`;

  it.each([
    ['only a setup.py', { 'vendor/probe/setup.py': 'raise SystemExit(9)\n' }, 'vendor/probe/pyproject.toml does not exist'],
    [
      'a pyproject.toml without [project]',
      { 'vendor/probe/pyproject.toml': '[build-system]\nrequires = []\n' },
      'vendor/probe/pyproject.toml has no [project] table',
    ],
    [
      'dynamic dependencies',
      { 'vendor/probe/pyproject.toml': '[project]\nname = "probe"\ndynamic = ["version", "dependencies"]\n' },
      'vendor/probe/pyproject.toml makes dependencies dynamic',
    ],
  ])('refuses a path source with %s, naming it, before uv is run', (_shape, files, found) => {
    const { status, output } = helper(files);
    expect(status).toBe(1);
    expect(output).toContain(refusal(found));
    expect(output).not.toContain('$ /bin/false');
  });

  it('hands a path source whose dependencies are static (a dynamic version too) to uv', () => {
    const { status, output } = helper({
      'vendor/probe/pyproject.toml': '[project]\nname = "probe"\ndynamic = ["version"]\ndependencies = []\n',
    });
    expect(output).not.toContain('has no static dependencies');
    expect({ status, output }).toEqual({ status: 1, output: expect.stringMatching(/^\$ \/bin\/false export /) });
  });
});
