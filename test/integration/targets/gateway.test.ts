import http from 'node:http';
import { createActivities } from '../../../activities';
import { isProcessAlive } from '@graphx/kit/os/processes';
import { InstanceStore } from '../../../src/db/repositories/instances';
import {
  addRevision,
  createDeployment,
  createTestDeps,
  runActivity,
  writeBuild,
  type TestDeps,
} from '../activities/pipelineFixtures';

// Instances run test/integration/targets/fakeRuntime.js: the real runtime is being built in parallel.
describe('the gateway in front of local instances (real HTTP, fake runtime script)', () => {
  let deps: TestDeps;
  let closeGateway: () => Promise<void>;
  beforeAll(async () => {
    deps = createTestDeps();
    closeGateway = await deps.target.startGateway();
  });
  afterAll(async () => {
    await closeGateway();
    await deps.close();
  });

  const deployed = async (resourceSpec: Record<string, unknown> | null = null) => {
    const deployment = await createDeployment(deps.db, deps.secretBox, { resourceSpec });
    writeBuild(deps.config, deployment.revisionId);
    const { url } = await runActivity(createActivities(deps).rolloutRevision, deployment);
    return { ...deployment, url };
  };

  it('strips the deployment prefix and passes every request header and the body through', async () => {
    const { url } = await deployed();
    const response = await rawRequest(`${url}/whoami/deep?x=1&y=2`, {
      method: 'POST',
      headers: [
        'X-Api-Key',
        'key-123',
        'Authorization',
        'Bearer abc',
        'X-Custom',
        'one',
        'X-Custom',
        'two',
        'Content-Type',
        'application/json',
      ],
      body: '{"hello":"world"}',
    });
    expect(response.status).toBe(200);
    const app = JSON.parse(response.body);
    expect(app.url).toBe('/whoami/deep?x=1&y=2');
    expect(app.method).toBe('POST');
    expect(app.body).toBe('{"hello":"world"}');
    expect(app.headers).toMatchObject({
      'x-api-key': 'key-123',
      authorization: 'Bearer abc',
      'x-custom': 'one, two',
      'content-type': 'application/json',
      'x-forwarded-prefix': `/${url.split('/').pop()}`,
    });
    expect(response.headers['x-fake-pid']).toBe(String(app.pid));
  });

  it('streams SSE event by event, without buffering the response', async () => {
    const { url } = await deployed();
    const arrivals: Array<{ at: number; text: string }> = [];
    const started = Date.now();
    await new Promise<void>((resolve, reject) => {
      http
        .get(`${url}/sse?count=4&gap=400`, (response) => {
          expect(response.headers['content-type']).toBe('text/event-stream');
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => arrivals.push({ at: Date.now() - started, text: chunk }));
          response.on('end', resolve);
        })
        .on('error', reject);
    });
    const events = arrivals.flatMap((arrival) =>
      arrival.text
        .split('\n\n')
        .filter(Boolean)
        .map(() => arrival.at),
    );
    expect(events).toHaveLength(4);
    // Each event arrives on its own, about 400 ms after the previous one, not all together at the end.
    for (let i = 1; i < events.length; i += 1) expect((events[i] as number) - (events[i - 1] as number)).toBeGreaterThan(250);
    expect(arrivals[0]?.text).toMatch(/^event: tick\ndata: \{"n":0/);
  });

  it('spreads requests over min_scale instances round-robin', async () => {
    const { url, deploymentId } = await deployed({ min_scale: 2 });
    expect(await new InstanceStore(deps.db).live(deploymentId)).toHaveLength(2);
    const pids = new Set<number>();
    for (let i = 0; i < 6; i += 1) pids.add(JSON.parse((await rawRequest(`${url}/whoami`)).body).pid);
    expect(pids.size).toBe(2);
  });

  it('answers 404 {"detail"} for an unknown deployment and 503 {"detail"} when nothing serves', async () => {
    const unknown = await rawRequest(`${deps.target.gatewayUrl()}/no-such-app/ok`);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toEqual({ detail: 'Deployment no-such-app not found.' });
    const idle = await createDeployment(deps.db, deps.secretBox);
    const waiting = await rawRequest(`${deps.target.gatewayUrl()}/${idle.name}/ok`);
    expect(waiting.status).toBe(503);
    expect(JSON.parse(waiting.body).detail).toMatch(/no running instance/);
  });

  it('a rollout switches instances with no failed request under a loop of requests, and open streams finish', async () => {
    const first = await deployed({ min_scale: 2 });
    const oldPids = (await new InstanceStore(deps.db).live(first.deploymentId)).map((row) => row.pid as number);
    const next = await addRevision(deps.db, deps.secretBox, first.deploymentId, {
      resourceSpec: { min_scale: 2 },
      secrets: [{ name: 'FAKE_OK_DELAY_MS', value: '500' }],
    });
    writeBuild(deps.config, next);

    // A stream opened before the switch must run to its end on the old instance (drain).
    const stream = rawRequest(`${first.url}/sse?count=8&gap=250`);
    const failures: string[] = [];
    const served: string[] = [];
    let rolling = true;
    const clients = Array.from({ length: 4 }, async (_, client) => {
      for (let i = 0; i < 2000 && (rolling || i < 5); i += 1) {
        const response = await rawRequest(`${first.url}/whoami`, {
          method: client % 2 ? 'POST' : 'GET',
          body: client % 2 ? '{"n":1}' : undefined,
        }).catch((error: Error) => ({ status: 0, body: error.message, headers: {} }));
        if (response.status !== 200) failures.push(`${response.status} ${response.body}`);
        else served.push(JSON.parse(response.body).revisionId);
      }
    });
    await runActivity(createActivities(deps).rolloutRevision, { revisionId: next, deploymentId: first.deploymentId });
    rolling = false;
    await Promise.all(clients);

    expect(failures).toEqual([]);
    expect(served).toContain(first.revisionId);
    expect(served[served.length - 1]).toBe(next);
    const streamed = await stream;
    expect(streamed.status).toBe(200);
    expect(streamed.body.match(/event: tick/g)).toHaveLength(8);
    expect(oldPids.filter(isProcessAlive)).toEqual([]);
    const live = await new InstanceStore(deps.db).live(first.deploymentId);
    expect(live.map((row) => row.revision_id)).toEqual([next, next]);
  });
});

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request with raw (repeatable) headers; the body collected as text. */
function rawRequest(url: string, options: { method?: string; headers?: string[]; body?: string } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers = ['Host', new URL(url).host, ...(options.headers ?? [])];
    const request = http.request(url, { method: options.method ?? 'GET', headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(options.body);
  });
}
