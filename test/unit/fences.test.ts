/**
 * The fences of eslint.config.js fail lint where the layering says no: each case is a throwaway file that does what
 * is forbidden, linted by the project's ESLint with its config (a child process: ESLint loads its config with a
 * dynamic import jest's sandbox lacks), then removed. A clean control file beside them
 * shows the failures come from the fence, not from the file being odd.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const ROOT = path.join(__dirname, '..', '..');
const PROBE = `fenceProbe${process.pid}`;

const CASES: Array<{ file: string; source: string; rule: string; why: string }> = [
  {
    why: 'the runtime imports control-plane code',
    file: `packages/runtime/src/${PROBE}.ts`,
    source: "import { createApp } from '../../../src/api/app';\nexport const probe = createApp;\n",
    rule: 'import/no-restricted-paths',
  },
  {
    why: 'the runtime imports an npm package its package.json does not name',
    file: `packages/runtime/src/${PROBE}Dependency.ts`,
    source: "import { Connection } from '@temporalio/client';\nexport const probe = Connection;\n",
    rule: 'import/no-extraneous-dependencies',
  },
  {
    why: 'the kit imports the runtime by its package name',
    file: `packages/kit/src/${PROBE}.ts`,
    source: "import { startRuntime } from '@graphx/runtime/server';\nexport const probe = startRuntime;\n",
    rule: 'import/no-restricted-paths',
  },
  {
    why: 'src/db imports something above it',
    file: `src/db/${PROBE}.ts`,
    source: "import { DeploymentService } from '../deployments/service';\nexport const probe = DeploymentService;\n",
    rule: 'import/no-restricted-paths',
  },
  {
    why: 'an activity imports a concrete target',
    file: `activities/${PROBE}.ts`,
    source: "import { ProcessTarget } from '../src/targets/process';\nexport const probe = ProcessTarget;\n",
    rule: 'import/no-restricted-paths',
  },
  {
    why: 'an activity imports a concrete builder',
    file: `activities/${PROBE}Builder.ts`,
    source: "import { HostBuilder } from '../src/builders/host/hostBuilder';\nexport const probe = HostBuilder;\n",
    rule: 'import/no-restricted-paths',
  },
  {
    why: 'a builder imports Temporal activity code',
    file: `src/builders/${PROBE}.ts`,
    source: "import { StepProgress } from '../../activities/support/progress';\nexport const probe = StepProgress;\n",
    rule: 'import/no-restricted-paths',
  },
];
const CONTROL = {
  file: `activities/${PROBE}Control.ts`,
  source:
    "import type { DeploymentTarget } from '../src/targets/target';\nimport type { RevisionBuilder } from '../src/builders/builder';\n" +
    'export type Probe = [DeploymentTarget, RevisionBuilder];\n',
};

afterAll(() => {
  for (const { file } of [...CASES, CONTROL]) fs.rmSync(path.join(ROOT, file), { force: true });
});

test('lint fails on each forbidden import and passes the allowed one beside them', () => {
  for (const { file, source } of [...CASES, CONTROL]) fs.writeFileSync(path.join(ROOT, file), source);
  const eslint = path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js');
  let output: string;
  try {
    output = execFileSync(process.execPath, [eslint, '--format', 'json', ...[...CASES, CONTROL].map(({ file }) => file)], {
      cwd: ROOT,
      encoding: 'utf8',
    });
  } catch (error) {
    output = (error as { stdout: string }).stdout; // exit code 1: lint found errors, as it should
  }
  const results = JSON.parse(output) as Array<{ filePath: string; messages: Array<{ ruleId: string | null }> }>;
  const rulesOf = (file: string) =>
    results.find((result) => result.filePath === path.join(ROOT, file))!.messages.map((message) => message.ruleId);
  for (const { file, rule, why } of CASES)
    expect({ why, rules: rulesOf(file) }).toEqual({ why, rules: expect.arrayContaining([rule]) });
  expect(rulesOf(CONTROL.file)).toEqual([]);
}, 120_000);
