/**
 * Issue 12's metrics acceptance: after real traffic (a deployment built and rolled out by the real pipeline, a run
 * streamed through the gateway), each server's /metrics parses as the Prometheus text format and its counters moved.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { createGitRepo, type GitRepo } from '../support/gitRepos';
import { codehostDeployment, readSse, startPipelineStack, type PipelineStack } from '../support/pipelineStack';
import { scrape, type Exposition } from '../support/prometheus';

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

function routeLabels(exposition: Exposition): string[] {
  return exposition.find('graphx_http_requests_total').map((sample) => sample.labels.route as string);
}

describe('Prometheus metrics of the API, the gateway, the worker and a deployed app', () => {
  let pipeline: PipelineStack;
  let repo: GitRepo;
  let name: string;
  let deploymentId: string;
  let revisionId: string;
  let instanceUrl: string;

  beforeAll(async () => {
    pipeline = await startPipelineStack();
    repo = createGitRepo(FIXTURE);
    name = `metrics-${crypto.randomBytes(3).toString('hex')}`;
    const created = await pipeline.api('POST', '/v2/deployments', codehostDeployment(name, repo.url));
    expect(created.status).toBe(201);
    deploymentId = created.body.id;
    revisionId = created.body.latest_revision_id;
    await pipeline.waitForRevision(deploymentId, revisionId, (status) => status === 'DEPLOYED' || status.endsWith('_FAILED'));
    const instance = await pipeline.stack
      .db('local_instances')
      .where({ deployment_id: deploymentId, status: 'serving' })
      .first('port');
    instanceUrl = `http://127.0.0.1:${instance.port}`;
  });
  afterAll(async () => {
    await pipeline?.stop();
  });

  it('the API counts requests by route pattern and status, never by raw path, and reports revisions by status', async () => {
    await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`);
    await pipeline.api('GET', `/v2/deployments/${crypto.randomUUID()}`);
    await fetch(`${pipeline.stack.apiUrl}/no/such/${crypto.randomUUID()}`);
    const api = await scrape(`${pipeline.stack.apiUrl}/metrics`);

    expect(api.types.get('graphx_http_requests_total')).toBe('counter');
    expect(api.types.get('graphx_http_request_duration_seconds')).toBe('histogram');
    expect(api.sum('graphx_http_requests_total', { method: 'POST', route: '/v2/deployments', status: '201' })).toBe(1);
    const revisionRoute = routeLabels(api).find(
      (route) => route.startsWith('/v2/deployments/:') && route.includes('/revisions/:'),
    );
    expect(revisionRoute).toBeDefined();
    expect(
      api.sum('graphx_http_requests_total', { method: 'GET', route: revisionRoute as string, status: '200' }),
    ).toBeGreaterThan(0);
    expect(api.sum('graphx_http_requests_total', { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(routeLabels(api).filter((route) => UUID.test(route))).toEqual([]);
    expect(api.sum('graphx_http_request_duration_seconds_count', { route: '/v2/deployments', method: 'POST' })).toBe(1);
    expect(api.sum('graphx_revisions', { status: 'DEPLOYED' })).toBeGreaterThanOrEqual(1);
    expect(api.find('graphx_build_queue_depth')).toHaveLength(1);
    expect(api.find('process_cpu_seconds_total', { server: 'api' })).toHaveLength(1);
  });

  it('the gateway counts proxied requests per deployment and reports its serving instances; apps’ metrics stay private', async () => {
    const before = await scrape(`${pipeline.stack.gatewayUrl}/-/metrics`);
    const labels = { route: `/${name}/*`, status: '200', method: 'GET' };
    expect((await fetch(`${pipeline.stack.gatewayUrl}/${name}/ok`)).status).toBe(200);
    expect((await fetch(`${pipeline.stack.gatewayUrl}/${name}/metrics`)).status).toBe(404);
    const after = await scrape(`${pipeline.stack.gatewayUrl}/-/metrics`);

    expect(after.sum('graphx_http_requests_total', labels) - before.sum('graphx_http_requests_total', labels)).toBe(1);
    expect(after.sum('graphx_deployment_instances', { deployment: name })).toBeGreaterThanOrEqual(1);
  });

  it('the worker times each pipeline step it ran', async () => {
    expect(pipeline.stack.workerMetricsUrl).not.toBeNull();
    const worker = await scrape(`${pipeline.stack.workerMetricsUrl}/metrics`);
    for (const step of ['clone', 'build', 'database', 'rollout']) {
      expect(worker.sum('graphx_pipeline_step_duration_seconds_count', { step, outcome: 'success' })).toBeGreaterThanOrEqual(1);
    }
    expect(worker.types.get('graphx_pipeline_step_duration_seconds')).toBe('histogram');
  });

  it('a deployed app counts runs per assistant, their latency and its open streams', async () => {
    const before = await scrape(`${instanceUrl}/metrics`);
    const response = await fetch(`${pipeline.stack.gatewayUrl}/${name}/runs/stream`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Api-Key': pipeline.apiKey },
      body: JSON.stringify({ assistant_id: 'agent', input: { input: 'hi' }, stream_mode: 'updates' }),
    });
    expect(response.status).toBe(200);
    await readSse(response);
    const after = await scrape(`${instanceUrl}/metrics`);
    const moved = (metric: string, labels: Record<string, string>) => after.sum(metric, labels) - before.sum(metric, labels);

    expect(moved('graphx_runs_started_total', { assistant: 'agent' })).toBe(1);
    expect(moved('graphx_runs_finished_total', { assistant: 'agent', status: 'success' })).toBe(1);
    expect(moved('graphx_runs_failed_total', { assistant: 'agent' })).toBe(0);
    expect(moved('graphx_run_duration_seconds_count', { assistant: 'agent' })).toBe(1);
    expect(moved('graphx_http_requests_total', { method: 'POST', route: '/runs/stream', status: '200' })).toBe(1);
    expect(after.sum('graphx_active_sse_streams')).toBe(0);
  });

  it('lists every app instance for Prometheus HTTP service discovery (http_sd_configs), and each target serves /metrics', async () => {
    // As Prometheus asks: `authorization: {credentials: <API key>}` sends it as a bearer token.
    const response = await fetch(`${pipeline.stack.apiUrl}/v2/metrics/targets`, {
      headers: { Authorization: `Bearer ${pipeline.apiKey}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const groups = (await response.json()) as unknown;
    // The http_sd format: a list of {targets: ["host:port"], labels: {name: value}} with Prometheus label names.
    expect(Array.isArray(groups)).toBe(true);
    for (const group of groups as Array<Record<string, unknown>>) {
      expect(Object.keys(group).sort()).toEqual(['labels', 'targets']);
      expect((group.targets as string[]).every((target) => /^[^:/\s]+:\d+$/.test(target))).toBe(true);
      for (const [label, value] of Object.entries(group.labels as Record<string, unknown>)) {
        expect(label).toMatch(/^[a-zA-Z_][a-zA-Z0-9_]*$/);
        expect(typeof value).toBe('string');
      }
    }
    const mine = (groups as Array<{ targets: string[]; labels: Record<string, string> }>).filter(
      (group) => group.labels.graphx_deployment_id === deploymentId,
    );
    expect(mine).toHaveLength(1);
    expect(mine[0]!.labels).toMatchObject({
      graphx_deployment: name,
      graphx_revision_id: revisionId,
      __metrics_path__: '/metrics',
    });
    expect(`http://${mine[0]!.targets[0]}`).toBe(instanceUrl);
    const app = await scrape(`http://${mine[0]!.targets[0]}${mine[0]!.labels.__metrics_path__}`);
    expect(app.find('process_cpu_user_seconds_total', { server: 'runtime' }).length).toBeGreaterThan(0);
  });
});
