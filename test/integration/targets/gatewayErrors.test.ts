/**
 * The gateway relays an app's own error answers unchanged and answers its own errors as `{"detail"}` JSON. The app
 * here is an in-process Koa server with the runtime's real error and body middleware (the 413 comes from there);
 * the gateway and PostgreSQL are real.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { errorMiddleware } from '@graphx/kit/http/errors';
import { jsonBodyMiddleware, MAX_BODY_BYTES } from '@graphx/kit/http/jsonBody';
import type { Db } from '../../../src/db/knex';
import { startGateway, type GatewayHandle } from '../../../src/targets/gateway/gateway';
import { testConfig, testDb, testSecretBox } from '../../support/env';
import { createDeployment } from '../activities/pipelineFixtures';

describe('the gateway and error answers (real gateway, app with the runtime middleware)', () => {
  let db: Db;
  let gateway: GatewayHandle;
  let app: http.Server;
  let name: string;

  beforeAll(async () => {
    db = testDb();
    const koa = new Koa();
    koa.use(errorMiddleware());
    koa.use(jsonBodyMiddleware());
    koa.use((ctx) => {
      ctx.body = { received: ctx.state.body !== undefined };
    });
    app = http.createServer(koa.callback());
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const deployment = await createDeployment(db, testSecretBox(testConfig()));
    name = deployment.name;
    await db('local_instances').insert({
      id: crypto.randomUUID(),
      deployment_id: deployment.deploymentId,
      revision_id: deployment.revisionId,
      port: (app.address() as AddressInfo).port,
      status: 'serving',
      stdout_path: '/dev/null',
      stderr_path: '/dev/null',
    });
    gateway = await startGateway({ db, host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await new Promise((resolve) => app.close(resolve));
    await db.destroy();
  });

  it.each([
    ['with a Content-Length', false],
    ['chunked', true],
  ])("passes the app's 413 for a body over the limit through (%s), not a 502", async (_label, chunked) => {
    const body = Buffer.alloc(MAX_BODY_BYTES * 3, 'a');
    const response = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const outgoing = http.request(`${gateway.url}/${name}/runs/wait`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': String(body.length) }) },
      });
      outgoing.on('response', (incoming) => {
        let text = '';
        incoming.on('data', (chunk: Buffer) => (text += chunk.toString()));
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, text }));
      });
      // The app may close the connection before it has read everything: that is the point, not a failure.
      outgoing.on('error', (error) => (outgoing.writableFinished ? undefined : reject(error)));
      if (chunked) {
        for (let offset = 0; offset < body.length; offset += 64 * 1024) outgoing.write(body.subarray(offset, offset + 64 * 1024));
        outgoing.end();
      } else outgoing.end(body);
    });
    expect(response.status).toBe(413);
    expect(JSON.parse(response.text)).toEqual({ detail: expect.stringContaining('larger than') });
  });

  it('answers a request line over 16 KiB with a JSON 431', async () => {
    const response = await fetch(`${gateway.url}/${name}/threads?x=${'a'.repeat(20_000)}`);
    expect(response.status).toBe(431);
    expect(await response.json()).toEqual({ detail: 'Request Header Fields Too Large' });
  });
});
