/**
 * Deployment URLs beyond loopback (issue 24, point 7): GRAPHX_GATEWAY_PUBLIC_URL is the public origin of the gateway
 * (the deployment's `url`, what its app's `Content-Location` and links are built on), and a deployment's custom_url is
 * an extra host the gateway routes to it, without the path prefix. Requests go to the gateway on loopback with the Host
 * header a client of those names would send (no DNS is needed).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { findFreePort } from '@graphx/kit/net/ports';
import { createGitRepo } from '../support/gitRepos';
import { codehostDeployment, startPipelineStack, type PipelineStack } from '../support/pipelineStack';

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo');

/** A request to the gateway on 127.0.0.1 as if sent to `host`. */
function viaHost(
  port: number,
  host: string,
  method: string,
  urlPath: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method, path: urlPath, headers: { ...headers, Host: host, 'Content-Type': 'application/json' } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }));
      },
    );
    request.on('error', reject);
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('public gateway URL and custom_url hosts', () => {
  let pipeline: PipelineStack;
  let port: number;
  let publicHost: string;

  beforeAll(async () => {
    port = await findFreePort();
    publicHost = `apps.graphx.test:${port}`;
    pipeline = await startPipelineStack({
      env: { GRAPHX_GATEWAY_PORT: String(port), GRAPHX_GATEWAY_PUBLIC_URL: `http://${publicHost}` },
    });
  });
  afterAll(async () => {
    await pipeline?.stop();
  });

  async function deploy(name: string): Promise<{ id: string; url: string }> {
    const created = await pipeline.api('POST', '/v2/deployments', codehostDeployment(name, createGitRepo(FIXTURE).url));
    expect(created.status).toBe(201);
    await pipeline.waitForRevision(
      created.body.id,
      created.body.latest_revision_id,
      (status) => status === 'DEPLOYED' || status.endsWith('_FAILED'),
      180_000,
    );
    const deployment = (await pipeline.api('GET', `/v2/deployments/${created.body.id}`)).body;
    return { id: deployment.id, url: deployment.url };
  }

  it('gives the deployment its public URL, and its app answers Content-Location with the path the client uses', async () => {
    const name = `public-${crypto.randomBytes(3).toString('hex')}`;
    const deployment = await deploy(name);
    expect(deployment.url).toBe(`http://${publicHost}/${name}`);
    const headers = { 'X-Api-Key': pipeline.apiKey };
    const thread = await viaHost(port, publicHost, 'POST', `/${name}/threads`, headers, {});
    expect(thread.status).toBe(200);
    const threadId = JSON.parse(thread.text).thread_id as string;
    const run = await viaHost(port, publicHost, 'POST', `/${name}/threads/${threadId}/runs/stream`, headers, {
      assistant_id: 'agent',
      input: { input: 'hi' },
      stream_mode: 'updates',
    });
    expect(run.status).toBe(200);
    expect(run.headers['content-location']).toMatch(new RegExp(`^/${name}/threads/${threadId}/runs/[0-9a-f-]{36}$`));
    expect(run.text).toContain('echo: hi');
  });

  it('routes a custom_url host to its deployment without the path prefix; the host is one deployment’s', async () => {
    const name = `custom-${crypto.randomBytes(3).toString('hex')}`;
    const { id } = await deploy(name);
    const customHost = `${name}.customer.test`;
    const patched = await pipeline.api('PATCH', `/v2/deployments/${id}`, {
      source_config: { custom_url: `https://${customHost}` },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.source_config.custom_url).toBe(`https://${customHost}`);

    const headers = { 'X-Api-Key': pipeline.apiKey };
    const thread = await viaHost(port, customHost, 'POST', '/threads', headers, {});
    expect(thread.status).toBe(200);
    const threadId = JSON.parse(thread.text).thread_id as string;
    const run = await viaHost(port, customHost, 'POST', `/threads/${threadId}/runs/stream`, headers, {
      assistant_id: 'agent',
      input: { input: 'custom' },
      stream_mode: 'updates',
    });
    expect(run.status).toBe(200);
    expect(run.text).toContain('echo: custom');
    expect(run.headers['content-location']).toMatch(new RegExp(`^/threads/${threadId}/runs/`));

    const other = await pipeline.api(
      'POST',
      '/v2/deployments',
      codehostDeployment(`taken-${crypto.randomBytes(3).toString('hex')}`, createGitRepo(FIXTURE).url, {
        sourceConfig: { custom_url: `http://${customHost.toUpperCase()}/elsewhere` },
      }),
    );
    expect(other.status).toBe(409);
    expect(other.body.detail).toContain('another deployment');
    const loopback = await pipeline.api('PATCH', `/v2/deployments/${id}`, {
      source_config: { custom_url: 'http://localhost:9' },
    });
    expect(loopback.status).toBe(400);
  });
});
