/**
 * `POST /internal/v1/runs` with a deployment's service token writes only into that deployment's own tracing project:
 * a token of tenant B that sends the run id of a run of tenant A changes nothing of it.
 */
import crypto from 'node:crypto';
import { createTenant } from '../../support/env';
import { seedDeployment, startControlPlane } from '../../../packages/runtime/test/integration/support/runtimeHarness';

let controlPlane: Awaited<ReturnType<typeof startControlPlane>>;
beforeAll(async () => {
  controlPlane = await startControlPlane();
});
afterAll(async () => {
  await controlPlane?.close();
});

async function sendRuns(serviceToken: string, runs: unknown[]): Promise<number> {
  const response = await fetch(`${controlPlane.url}/internal/v1/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${serviceToken}` },
    body: JSON.stringify({ runs }),
  });
  return response.status;
}

async function projectRuns(apiKey: string, projectId: string): Promise<Array<{ id: string; status: string; outputs: unknown }>> {
  const response = await fetch(`${controlPlane.url}/v1/projects/${projectId}/runs?limit=100`, {
    headers: { 'x-api-key': apiKey },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { resources: Array<{ id: string; status: string; outputs: unknown }> }).resources;
}

test("a service token of tenant B cannot overwrite a run of tenant A's project, nor move it, while A's own token still updates it", async () => {
  const tenantA = await createTenant(controlPlane.db, 'tracing-a');
  const tenantB = await createTenant(controlPlane.db, 'tracing-b');
  const deploymentA = await seedDeployment(controlPlane.db, tenantA.tenantId);
  const deploymentB = await seedDeployment(controlPlane.db, tenantB.tenantId);
  const runId = crypto.randomUUID();
  const run = { run_id: runId, status: 'running', start_time: '2026-11-23T10:00:00.000Z', inputs: { q: 'hi' } };

  expect(await sendRuns(deploymentA.serviceToken, [run])).toBe(202);
  const attack = { ...run, status: 'success', end_time: '2026-11-23T10:00:01.000Z', outputs: { answer: 'attacker text' } };
  expect(await sendRuns(deploymentB.serviceToken, [attack])).toBe(202);

  expect(await projectRuns(tenantA.apiKey, deploymentA.projectId)).toEqual([
    expect.objectContaining({ id: runId, status: 'running', outputs: null }),
  ]);
  expect(await projectRuns(tenantB.apiKey, deploymentB.projectId)).toEqual([]);

  const finished = { ...run, status: 'success', end_time: '2026-11-23T10:00:02.000Z', outputs: { answer: 'hello' } };
  expect(await sendRuns(deploymentA.serviceToken, [finished])).toBe(202);
  expect(await projectRuns(tenantA.apiKey, deploymentA.projectId)).toEqual([
    expect.objectContaining({ id: runId, status: 'success', outputs: { answer: 'hello' } }),
  ]);
});
