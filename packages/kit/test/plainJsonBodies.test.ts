/**
 * The app with plain JSON bodies written directly answers byte for byte as Koa alone does, for every kind of body
 * and status a route sets (both apps served over loopback, their answers compared).
 */
import http from 'node:http';
import { Readable } from 'node:stream';
import Koa from 'koa';
import { setPlainJsonBodiesDirectly } from '../src/http/plainJsonBodies';

type Route = (ctx: Koa.Context) => void;
const ROUTES: Record<string, Route> = {
  '/object': (ctx) => (ctx.body = { ok: true, nested: { list: [1, 'two', null] } }),
  '/array': (ctx) => (ctx.body = [{ a: 1 }, 'é — ≥']),
  '/created': (ctx) => {
    ctx.status = 201;
    ctx.body = { id: 'x' };
  },
  '/problem': (ctx) => {
    ctx.status = 422;
    ctx.type = 'application/problem+json';
    ctx.body = { detail: 'bad' };
  },
  '/typed-text': (ctx) => {
    ctx.type = 'text/plain';
    ctx.body = { shown: 'as json' };
  },
  '/null-prototype': (ctx) => (ctx.body = Object.assign(Object.create(null) as object, { a: 1 })),
  '/replaced-stream': (ctx) => {
    ctx.body = Readable.from(['never sent']);
    ctx.body = { replaced: true };
  },
  '/string': (ctx) => (ctx.body = 'plain'),
  '/buffer': (ctx) => (ctx.body = Buffer.from('bytes')),
  '/date': (ctx) => (ctx.body = new Date(0)),
  '/null': (ctx) => (ctx.body = null),
  '/empty-status': (ctx) => {
    ctx.status = 304;
    ctx.body = { ignored: true };
  },
  '/read-back': (ctx) => {
    ctx.body = { a: 1 };
    (ctx.body as { a: number; b?: number }).b = 2; // a later middleware may still change the object
  },
};

function appOf(shortcut: boolean): Koa {
  const app = new Koa();
  if (shortcut) setPlainJsonBodiesDirectly(app);
  app.use(async (ctx, next) => {
    await next();
    // An inner middleware sees the object the route set, as with Koa alone.
    ctx.set('x-body-kind', ctx.body === null || ctx.body === undefined ? 'none' : typeof ctx.body);
  });
  app.use(async (ctx) => ROUTES[ctx.path]?.(ctx));
  return app;
}

async function serve(app: Koa): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function answer(url: string, method: string) {
  const response = await fetch(url, { method });
  const headers = Object.fromEntries([...response.headers].filter(([name]) => name !== 'date'));
  return { status: response.status, headers, body: await response.text() };
}

let plain: Awaited<ReturnType<typeof serve>>;
let direct: Awaited<ReturnType<typeof serve>>;
beforeAll(async () => {
  plain = await serve(appOf(false));
  direct = await serve(appOf(true));
});
afterAll(async () => {
  await plain?.close();
  await direct?.close();
});

test.each(Object.keys(ROUTES).flatMap((route) => [route, `HEAD ${route}`]))('%s: the same answer as Koa alone', async (name) => {
  const [method, route] = name.startsWith('HEAD ') ? ['HEAD', name.slice(5)] : ['GET', name];
  const expected = await answer(`${plain.url}${route}`, method);
  expect(await answer(`${direct.url}${route}`, method)).toEqual(expected);
  if (route === '/object' && method === 'GET') {
    expect(expected.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(expected.body)).toEqual({ ok: true, nested: { list: [1, 'two', null] } });
  }
});
