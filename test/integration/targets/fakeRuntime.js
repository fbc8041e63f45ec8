// A stand-in for `graphx runtime` whose start-up failures and delays the tests can steer (the real runtime is rolled out
// in realRuntime.test.ts and the e2e tests): serves GET /ok and a few routes the gateway tests need, and on SIGTERM
// stops accepting, lets open streams finish, then exits 0 — the runtime's contract.
// Steered by deployment secrets (they arrive as environment variables): FAKE_EXIT_WITH (any value: fail at start-up), FAKE_OK_DELAY_MS.
const crypto = require('node:crypto');
const http = require('node:http');

if (process.env.FAKE_EXIT_WITH) {
  console.log('fake runtime starting');
  console.error('Error: Cannot find module ./src/graph.js');
  process.exit(3);
}

const startedAt = Date.now();
const okDelay = Number(process.env.FAKE_OK_DELAY_MS || 0);

const server = http.createServer((req, res) => {
  if (req.url === '/ok') {
    const ready = Date.now() - startedAt >= okDelay;
    res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: ready }));
    return;
  }
  if (req.url.startsWith('/whoami')) {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-fake-pid': String(process.pid) });
      res.end(
        JSON.stringify({
          pid: process.pid,
          url: req.url,
          method: req.method,
          headers: req.headers,
          body,
          revisionId: process.env.GRAPHX_REVISION_ID,
          envKeys: Object.keys(process.env).sort(),
          env: {
            PORT: process.env.PORT,
            HOST: process.env.HOST,
            NODE_OPTIONS: process.env.NODE_OPTIONS,
            GRAPHX_CONTROL_PLANE_URL: process.env.GRAPHX_CONTROL_PLANE_URL,
            GRAPHX_CONFIG_PATH: process.env.GRAPHX_CONFIG_PATH,
            DATABASE_URI_USER: new URL(process.env.DATABASE_URI).username,
          },
          serviceTokenHash: crypto
            .createHash('sha256')
            .update(process.env.GRAPHX_SERVICE_TOKEN || '')
            .digest('hex'),
          cwd: process.cwd(),
        }),
      );
    });
    return;
  }
  if (req.url.startsWith('/sse')) {
    const count = Number(new URL(req.url, 'http://x').searchParams.get('count') || 3);
    const gap = Number(new URL(req.url, 'http://x').searchParams.get('gap') || 300);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let sent = 0;
    const tick = () => {
      res.write(`event: tick\ndata: {"n":${sent},"at":${Date.now()}}\n\n`);
      sent += 1;
      if (sent >= count) res.end();
      else setTimeout(tick, gap);
    };
    tick();
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ detail: 'not found' }));
});

server.listen(Number(process.env.PORT), process.env.HOST || '127.0.0.1', () => {
  console.log(`fake runtime listening on ${process.env.PORT}`);
});

process.on('SIGTERM', () => {
  console.log('fake runtime draining');
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 30_000).unref();
});
