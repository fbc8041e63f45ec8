/**
 * The deployed app's CORS without `http.cors` (as the anchor's JS server): any origin, no credentials, the request's
 * headers allowed, `Content-Location` and the pagination headers exposed. A Koa app on a loopback port.
 */
import http from 'node:http';
import Koa from 'koa';
import { corsMiddleware } from '../../src/http/cors';

let server: http.Server;
let url: string;

beforeAll(async () => {
  const app = new Koa();
  app.use(corsMiddleware(null));
  app.use((ctx) => {
    ctx.set('Content-Location', '/runs/1');
    ctx.body = { ok: true };
  });
  server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

test('without http.cors any origin may call, without credentials, and reads Content-Location and pagination headers', async () => {
  const preflight = await fetch(`${url}/threads/search`, {
    method: 'OPTIONS',
    headers: {
      Origin: 'https://anywhere.example',
      'Access-Control-Request-Method': 'PATCH',
      'Access-Control-Request-Headers': 'x-api-key',
    },
  });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
  expect(preflight.headers.get('access-control-allow-methods')).toContain('PATCH');
  expect(preflight.headers.get('access-control-allow-headers')).toBe('x-api-key');
  expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();

  const response = await fetch(`${url}/threads/search`, { headers: { Origin: 'https://anywhere.example' } });
  expect(response.headers.get('access-control-allow-origin')).toBe('*');
  expect(response.headers.get('access-control-expose-headers')).toBe('Content-Location, X-Pagination-Total, X-Pagination-Next');
  expect((await fetch(`${url}/x`)).headers.get('access-control-allow-origin')).toBeNull();
});
