/**
 * The control plane serves the web console (the built single page under /console/, with a policy that forbids
 * inline script and framing) and the studio's door to a deployed app (`/v2/deployments/{id}/app/...`): the tenant's
 * key first, then the app's answer relayed as it streams, sandboxed. The app here is a real HTTP server on loopback
 * standing in for a deployment (its URL is the deployment's `url`), so what crosses the door can be seen.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import Koa from 'koa';
import request from 'supertest';
import { createApp } from '../../../src/api/app';
import type { Db } from '../../../src/db/knex';
import { consolePagesMiddleware } from '@graphx/kit/http/consolePages';
import { createTenant, testConfig, testDb, testSecretBox, testTemporalClient } from '../../support/env';

const { ensureConsoleBuilt } = require('../../../scripts/build-console.js') as {
  ensureConsoleBuilt: () => { dir: string | null };
};

interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A stand-in app: records each request; `/stream` sends one SSE event, then the second when `release` is called. */
function startFakeApp() {
  const seen: SeenRequest[] = [];
  let release: () => void = () => {};
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (req.url?.startsWith('/stream')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: metadata\ndata: {"run_id":"r1"}\n\n');
        release = () => res.end('event: values\ndata: {"done":true}\n\n');
        return;
      }
      if (req.url === '/page') {
        res.writeHead(200, {
          'content-type': 'text/html',
          'set-cookie': 'session=stolen',
          'content-security-policy': "script-src 'unsafe-inline'",
          'access-control-allow-origin': '*',
        });
        res.end('<script>alert(1)</script>');
        return;
      }
      res.writeHead(201, { 'content-type': 'application/json', 'x-pagination-total': '3' });
      res.end(JSON.stringify({ answered: req.url }));
    });
  });
  return {
    seen,
    release: () => release(),
    server,
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
  };
}

describe('the control plane serves the console and the studio’s door to apps', () => {
  let db: Db;
  let temporal: Client;
  let app: Koa;
  let keyA: string;
  let keyB: string;
  let deployedId: string;
  let undeployedId: string;
  const fake = startFakeApp();
  const call = () => request(app.callback());

  beforeAll(async () => {
    expect(ensureConsoleBuilt().dir).toBeTruthy();
    db = testDb();
    temporal = await testTemporalClient();
    const config = testConfig();
    app = createApp({ config, db, secretBox: testSecretBox(config), temporal, temporalUiUrl: 'http://127.0.0.1:8233' });
    keyA = (await createTenant(db, 'console-a')).apiKey;
    keyB = (await createTenant(db, 'console-b')).apiKey;
    const body = (name: string) => ({
      name,
      source: 'codehost',
      source_config: { repo_url: 'https://example.com/acme/agent.git' },
      source_revision_config: {},
    });
    deployedId = (
      await call()
        .post('/v2/deployments')
        .set('X-Api-Key', keyA)
        .send(body(`studio-${crypto.randomBytes(3).toString('hex')}`))
    ).body.id;
    undeployedId = (
      await call()
        .post('/v2/deployments')
        .set('X-Api-Key', keyA)
        .send(body(`studio-${crypto.randomBytes(3).toString('hex')}`))
    ).body.id;
    await db('deployments')
      .where({ id: deployedId })
      .update({ url: `${await fake.listen()}` });
  });
  afterAll(async () => {
    fake.server.closeAllConnections();
    await new Promise((resolve) => fake.server.close(resolve));
    await temporal.connection.close();
    await db.destroy();
  });

  it('serves the console page on every route below /console/ with its base, mode and Temporal link, and a policy forbidding inline script and framing', async () => {
    expect((await call().get('/console')).headers.location).toBe('/console/');
    expect((await call().get('/')).headers.location).toBe('/console/');
    for (const route of ['/console/', '/console/deployments/3b6f0c1e-0000-4000-8000-000000000000/studio']) {
      const page = await call().get(route);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.text).toContain('<base href="/console/">');
      expect(page.text).toContain('<meta name="graphx:mode" content="console">');
      expect(page.text).toContain('<meta name="graphx:temporal-ui" content="http://127.0.0.1:8233/namespaces/default">');
      // Every script is a file of this origin: no inline one.
      expect(page.text.match(/<script\b[^>]*>/g)?.every((tag) => / src="\.\/assets\/[^"]+\.js"/.test(tag))).toBe(true);
      const policy = page.headers['content-security-policy'];
      expect(policy).toContain("script-src 'self'");
      expect(policy).not.toContain('unsafe-inline');
      expect(policy).not.toContain('unsafe-eval');
      expect(policy).toContain("frame-ancestors 'none'");
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('serves the built assets by name with a long cache and answers an unknown one 404 with a JSON detail', async () => {
    const page = (await call().get('/console/')).text;
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(page)?.[1] as string;
    const asset = await call().get(`/console/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/^text\/javascript/);
    expect(asset.headers['cache-control']).toContain('immutable');
    const missing = await call().get('/console/assets/nothing-here.js');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: 'Not found.' });
    const escape = await call().get('/console/assets/..%2F..%2Fpackage.json');
    expect(escape.status).toBe(404);
  });

  it('answers 503 with a JSON detail saying how to build the console when no build exists', async () => {
    const bare = new Koa();
    const nowhere = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-no-console-'));
    bare.use(consolePagesMiddleware({ mountPath: '/console', mode: 'console', distDir: nowhere }));
    const answer = await request(bare.callback()).get('/console/');
    expect(answer.status).toBe(503);
    expect(answer.body.detail).toContain('npm run build:console');
  });

  it('lets a request reach the app only with a key of the deployment’s tenant', async () => {
    const path = `/v2/deployments/${deployedId}/app/threads/search`;
    const none = await call().post(path).send({});
    expect(none.status).toBe(401);
    expect(none.body.detail).toBe('Missing X-Api-Key header.');
    const other = await call().post(path).set('X-Api-Key', keyB).send({});
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ detail: `Deployment ID ${deployedId} not found.` });
    const notYet = await call().get(`/v2/deployments/${undeployedId}/app/info`).set('X-Api-Key', keyA);
    expect(notYet.status).toBe(409);
    expect(notYet.body.detail).toMatch(/has no deployed revision yet/);
    expect(fake.seen).toEqual([]);
  });

  it('passes the request on marked as a debugging-UI request with the key, never cookies or Authorization, and relays the answer sandboxed', async () => {
    const answer = await call()
      .post(`/v2/deployments/${deployedId}/app/threads/search?limit=5`)
      .set('X-Api-Key', keyA)
      .set('x-auth-scheme', 'something-else')
      .set('Cookie', 'console=1')
      .set('Authorization', 'Bearer not-for-the-app')
      .send({ metadata: { owner: 'alice' } });
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({ answered: '/threads/search?limit=5' });
    expect(answer.headers['x-pagination-total']).toBe('3');
    expect(answer.headers['content-security-policy']).toContain('sandbox');
    const seen = fake.seen.at(-1) as SeenRequest;
    expect(seen.method).toBe('POST');
    expect(seen.headers['x-auth-scheme']).toBe('graphx-studio');
    expect(seen.headers['x-api-key']).toBe(keyA);
    expect(seen.headers.cookie).toBeUndefined();
    expect(seen.headers.authorization).toBeUndefined();
    expect(JSON.parse(seen.body)).toEqual({ metadata: { owner: 'alice' } });

    // A call that posts nothing (a run's cancel) goes through without a body.
    const cancel = await call().post(`/v2/deployments/${deployedId}/app/threads/t1/runs/r1/cancel?wait=0`).set('X-Api-Key', keyA);
    expect(cancel.status).toBe(201);
    expect(fake.seen.at(-1)).toMatchObject({ method: 'POST', url: '/threads/t1/runs/r1/cancel?wait=0', body: '' });

    const page = await call().get(`/v2/deployments/${deployedId}/app/page`).set('X-Api-Key', keyA);
    expect(page.headers['set-cookie']).toBeUndefined();
    expect(page.headers['access-control-allow-origin']).toBeUndefined();
    expect(page.headers['content-security-policy']).toBe("default-src 'none'; sandbox; frame-ancestors 'none'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
  });

  it('relays a stream event by event, before the app has finished it', async () => {
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/deployments/${deployedId}/app/stream`,
        {
          headers: { 'X-Api-Key': keyA },
        },
      );
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      const reader = response.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain('event: metadata');
      fake.release();
      let rest = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
        rest += new TextDecoder().decode(chunk.value);
      expect(rest).toContain('event: values');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers 502 with a JSON detail when the app cannot be reached', async () => {
    await db('deployments').where({ id: undeployedId }).update({ url: 'http://127.0.0.1:9' });
    const answer = await call().get(`/v2/deployments/${undeployedId}/app/info`).set('X-Api-Key', keyA);
    expect(answer.status).toBe(502);
    expect(answer.body).toEqual({ detail: 'The deployment could not be reached.' });
  });
});
