/** The token endpoint's transport against a real loopback HTTP server that misbehaves in the ways peers do. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { postForm } from '@graphx/kit/net/formPost';

describe('postForm', () => {
  let server: http.Server;
  let url: string;
  const received: string[] = [];

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        received.push(body);
        if (request.url === '/ok') response.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"t"}');
        else if (request.url === '/redirect') response.writeHead(302, { location: 'http://169.254.169.254/' }).end();
        else if (request.url === '/huge') response.writeHead(200).end('x'.repeat(100_000));
        else if (request.url === '/cut') {
          response.writeHead(200, { 'content-length': '1000' });
          response.write('{"access_');
          setTimeout(() => response.destroy(), 50);
        } else if (request.url === '/stall') response.writeHead(200).write('{');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const post = (path: string, timeoutMs = 5_000) =>
    postForm(`${url}${path}`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=x',
      timeoutMs,
      maxChars: 1_000,
    });

  it('sends the form and reads the answer with its status and content type', async () => {
    await expect(post('/ok')).resolves.toEqual({ status: 200, contentType: 'application/json', text: '{"access_token":"t"}' });
    expect(received).toContain('grant_type=x');
  });

  it('does not follow a redirect: the 302 is the answer', async () => {
    await expect(post('/redirect')).resolves.toMatchObject({ status: 302 });
  });

  it('cuts an over-long answer at maxChars', async () => {
    const answer = await post('/huge');
    expect(answer.text).toHaveLength(1_000);
  });

  it('rejects a response the peer cut short, and one that stalls past the timeout', async () => {
    await expect(post('/cut')).rejects.toThrow();
    await expect(post('/stall', 300)).rejects.toThrow();
  });
});
