/**
 * Workflows already running when a worker is upgraded must go on: the histories recorded from the pipeline scenarios
 * (test/fixtures/histories, written by pipelineWorkflows.test.ts with GRAPHX_RECORD_HISTORIES=<dir>) replay on today's
 * workflow code without a single non-determinism error. A change of the commands a workflow issues needs a patch.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { testEnv } from '../../support/env';

const HISTORIES = path.join(__dirname, '..', '..', 'fixtures', 'histories');

test('every recorded deployment and revision workflow history replays on the current workflow code', async () => {
  const files = fs.readdirSync(HISTORIES).filter((file) => file.endsWith('.json'));
  expect(files.filter((file) => file.startsWith('revision-')).length).toBeGreaterThan(3);
  expect(files.filter((file) => file.startsWith('deployment-')).length).toBeGreaterThan(3);
  const histories = files.map((file) => ({
    workflowId: file,
    history: JSON.parse(fs.readFileSync(path.join(HISTORIES, file), 'utf8')) as unknown,
  }));
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: { codePath: testEnv.workflowBundlePath() } },
    histories,
  )) {
    if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
  }
  expect(failures).toEqual([]);
});
