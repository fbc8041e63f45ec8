import http from 'node:http';
import Koa from 'koa';
import { errorMiddleware } from '../src/api/middleware/errors';
import { jsonBodyMiddleware } from '../src/api/middleware/jsonBody';
const koa = new Koa();
koa.use(errorMiddleware()); koa.use(jsonBodyMiddleware()); koa.use((ctx) => { ctx.body = {ok:1}; });
const app = http.createServer(koa.callback());
app.listen(0, '127.0.0.1', () => {
  const port = (app.address() as any).port;
  const body = Buffer.alloc(3 * 1024 * 1024, 'a');
  const t = Date.now();
  const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-type': 'application/json' } });
  req.on('response', (r) => { let s=''; r.on('data', c => s+=c); r.on('end', () => { console.log('response', r.statusCode, s, Date.now()-t); process.exit(0); }); });
  req.on('error', (e) => console.log('req error', e.message, Date.now()-t));
  for (let o = 0; o < body.length; o += 65536) req.write(body.subarray(o, o + 65536));
  req.end();
});
