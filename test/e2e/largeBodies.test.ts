/**
 * Request bodies through the gateway (issue 24, point 5): large inputs reach the app (the Python server takes up to
 * 300 MB, so do the gateway and the runtime by default; the stack here sets a smaller gateway limit so the test need
 * not send 300 MB), a body over the limit is a 413 with a `detail` whether its size is announced or only found while
 * streaming, and a method no route has (TRACE) is a 405 like any other.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { runTuningFromEnv } from '@graphx/runtime/settings';
import { createGitRepo } from '../support/gitRepos';
import { codehostDeployment, readSse, startPipelineStack, type PipelineStack } from '../support/pipelineStack';

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo');
const LIMIT = 8 * 1024 * 1024;

/** One request on its own connection; resolves with the answer (the body may still be sending when it comes). */
function rawRequest(
  url: string,
  options: { method: string; headers?: Record<string, string | number>; write?: (request: http.ClientRequest) => void },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method, headers: options.headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
        request.destroy();
      });
    });
    request.on('error', reject);
    if (options.write) options.write(request);
    else request.end();
  });
}

describe('request bodies and methods through the gateway', () => {
  let pipeline: PipelineStack;
  let url: string;

  async function deployEcho(): Promise<string> {
    const repo = createGitRepo(FIXTURE);
    const created = await pipeline.api(
      'POST',
      '/v2/deployments',
      codehostDeployment(`bodies-${crypto.randomBytes(3).toString('hex')}`, repo.url),
    );
    const { id, latest_revision_id: revisionId } = created.body;
    await pipeline.waitForRevision(id, revisionId, (status) => status === 'DEPLOYED' || status.endsWith('_FAILED'), 180_000);
    return (await pipeline.api('GET', `/v2/deployments/${id}`)).body.url as string;
  }

  beforeAll(async () => {
    pipeline = await startPipelineStack({ env: { GRAPHX_GATEWAY_MAX_BODY_BYTES: String(LIMIT) } });
    url = await deployEcho();
  }, 240_000);
  afterAll(async () => {
    await pipeline?.stop();
  });

  it("a 3 MB /runs/stream input reaches the app (at the runtime's default limit) and comes back in its answer", async () => {
    const input = 'x'.repeat(3 * 1024 * 1024);
    const response = await fetch(`${url}/runs/stream`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Api-Key': pipeline.apiKey },
      body: JSON.stringify({ assistant_id: 'agent', input: { input }, stream_mode: 'updates' }),
    });
    expect(response.status).toBe(200);
    const events = await readSse(response);
    const update = events.find((event) => event.event === 'updates')?.data as { respond: { echo: string } };
    expect(update.respond.echo).toBe(`echo: ${input}`);
  }, 60_000);

  it("the gateway's and the runtime's default limits are the Python server's 300 MB", () => {
    expect(loadConfig({}, { GRAPHX_DATA_DIR: '/tmp/x' }).gatewayMaxBodyBytes).toBe(300 * 1024 * 1024);
    expect(runTuningFromEnv({}).maxRequestBodyBytes).toBe(300 * 1024 * 1024);
  });

  it('a body announced larger than GRAPHX_GATEWAY_MAX_BODY_BYTES is a 413 with a detail, before it is sent', async () => {
    const response = await rawRequest(`${url}/runs/stream`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Api-Key': pipeline.apiKey, 'Content-Length': LIMIT + 1 },
      write: (request) => request.write('{"assistant_id": "agent", "input": {"input": "'),
    });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toEqual({
      detail: `Request body is larger than the gateway's limit of ${LIMIT} bytes.`,
    });
  });

  it('a body streamed without a length past GRAPHX_GATEWAY_MAX_BODY_BYTES is a 413 with a detail', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    const response = await rawRequest(`${url}/runs/stream`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Api-Key': pipeline.apiKey, 'Transfer-Encoding': 'chunked' },
      write: (request) => {
        request.write('{"assistant_id": "agent", "input": {"input": "');
        let sent = 0;
        const more = () => {
          while (sent < 12 && request.write(chunk)) sent += 1;
          if (sent < 12) request.once('drain', more);
        };
        more();
      },
    });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toEqual({
      detail: `Request body is larger than the gateway's limit of ${LIMIT} bytes.`,
    });
  });

  it('TRACE is a 405 with an Allow header and a detail, on a deployed app and on the control-plane API', async () => {
    const app = await rawRequest(`${url}/threads`, { method: 'TRACE', headers: { 'X-Api-Key': pipeline.apiKey } });
    expect(app.status).toBe(405);
    expect(app.headers.allow).toContain('POST');
    expect(JSON.parse(app.body)).toHaveProperty('detail');
    const api = await rawRequest(`${pipeline.stack.apiUrl}/v2/deployments`, {
      method: 'TRACE',
      headers: { 'X-Api-Key': pipeline.apiKey },
    });
    expect(api.status).toBe(405);
    expect(api.headers.allow).toContain('GET');
    expect(JSON.parse(api.body)).toHaveProperty('detail');
  });
});
