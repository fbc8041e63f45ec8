/**
 * graphx.json `dependencies` against the packages the Python executor pins: a requirement the pin satisfies is
 * accepted (pip then installs the pin), one that would replace it, a URL for it, or a pip option fails naming the key.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkPythonDependencies, reservedRequirement } from '@graphx/runtime/python/pythonRequirements';
import { uvProjectRoot } from '@graphx/runtime/python/uvProject';

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
