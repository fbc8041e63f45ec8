/** The run webhook under the outbound address policy (a real HTTP receiver on loopback). */
import http from 'node:http';
import { webhookDeliverer } from '../../src/recording/webhook';
import type { Run } from '../../src/storage/runStore';

const run = { run_id: 'r1', thread_id: null, status: 'success' } as unknown as Run;
let server: http.Server;
let url: string;
let received = 0;

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    received += 1;
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

test('a webhook to loopback is refused under the default policy and nothing is sent', async () => {
  await expect(webhookDeliverer('public')(url, run, {})).rejects.toThrow(/refused destination 127.0.0.1/);
  await expect(webhookDeliverer('private')(url.replace('127.0.0.1', 'localhost'), run, {})).rejects.toThrow(/refused/);
  expect(received).toBe(0);
});

test("a webhook path (the app's own server) is refused unless loopback is allowed", async () => {
  await expect(webhookDeliverer('public')('/hook', run, {})).rejects.toThrow(
    /refused unless GRAPHX_RUNTIME_WEBHOOK_DESTINATIONS=any/,
  );
  await expect(webhookDeliverer('private')('/hook', run, {})).rejects.toThrow(/refused/);
});

test('a webhook to loopback is delivered when the operator allows any destination', async () => {
  await webhookDeliverer('any')(url, run, { messages: [] });
  expect(received).toBe(1);
});
