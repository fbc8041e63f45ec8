import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { findFreePort } from '@graphx/kit/net/ports';
import { ROOT, startProcess } from './runtimeProcess';

const LOG = '/var/log/postgresql/postgresql-15-main.log';
const APP_CONFIG = path.join(ROOT, 'test', 'fixtures', 'apps', 'runtime-echo', 'graphx.json');
const input = { messages: [{ role: 'user', content: 'hi' }] };
const ROOT_END = /"namespace":\[\],"timestamp":\d+,"data":\{"event":"(completed|interrupted|failed)"/;
function request(port: number, p: string, body: unknown, onData?: (t: string) => boolean, onHeaders?: () => void) {
  return new Promise<void>((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port, path: p, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      onHeaders?.();
      let seen = '';
      res.on('data', (c: Buffer) => { seen += c.toString(); if (onData?.(seen)) { res.destroy(); resolve(); } });
      res.on('end', () => resolve());
      res.on('error', () => resolve());
    });
    req.on('error', reject);
    req.end(text);
  });
}
async function v2(port: number) {
  const threadId = crypto.randomUUID();
  let opened!: () => void;
  const ready = new Promise<void>((r) => (opened = r));
  const ended = request(port, `/threads/${threadId}/stream/events`, { channels: ['values', 'updates', 'messages', 'lifecycle'] }, (s) => ROOT_END.test(s), opened);
  await ready;
  await request(port, `/threads/${threadId}/commands`, { id: 1, method: 'run.start', params: { assistant_id: 'agent', input } });
  await ended;
}
const legacy = (port: number) => request(port, `/threads/${crypto.randomUUID()}/runs/stream`, { assistant_id: 'agent', input, stream_mode: ['values', 'updates', 'messages-tuple'], if_not_exists: 'create' });
async function main() {
  const admin = new PgClient({ connectionString: 'postgres://postgres:graphx@127.0.0.1:5432/postgres' });
  await admin.connect();
  const db = `gx_stmt_${Date.now().toString(36)}`;
  await admin.query(`CREATE DATABASE "${db}"`);
  await admin.query(`ALTER DATABASE "${db}" SET log_statement = 'all'`);
  const port = await findFreePort();
  const server = await startProcess('graphx dev', process.execPath, [path.join(ROOT, 'bin', 'graphx.js'), 'dev', '--config', APP_CONFIG, '--port', String(port)], { DATABASE_URI: `postgres://postgres:graphx@127.0.0.1:5432/${db}`, GRAPHX_LOG_LEVEL: 'warn' }, port);
  try {
    for (let i = 0; i < 3; i++) { await legacy(port); await v2(port); }
    for (const [name, fn] of [['legacy-same', legacy], ['v2', v2]] as const) {
      await new Promise((r) => setTimeout(r, 500));
      const start = fs.statSync(LOG).size;
      await fn(port);
      await new Promise((r) => setTimeout(r, 800));
      const text = fs.readFileSync(LOG, 'utf8').slice(start);
      fs.writeFileSync(`/tmp/stmt/${name}.log`, text);
      console.log(name, (text.match(/LOG:  (statement|execute)/g) ?? []).length);
    }
  } finally {
    await server.stop();
    await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
    await admin.end();
  }
}
void main();
