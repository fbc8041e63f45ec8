/**
 * A real git smart-HTTP server for tests: `git http-backend` (CGI) behind a small Node HTTP server on 127.0.0.1 that
 * requires `Authorization: Basic base64(x-access-token:<requiredToken>)`, the way code hosts accept app tokens.
 * Repositories are the bare `<name>.git` directories under `reposDir`; clone `${url}/<name>.git`.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';

export interface GitHttpServer {
  /** Base URL, e.g. `http://127.0.0.1:43123`. */
  url: string;
  /** Every request seen, with whether it carried the right token (for asserting how git authenticated). */
  requests: Array<{ method: string; path: string; authorized: boolean }>;
  stop(): Promise<void>;
}

function isAuthorized(header: string | undefined, requiredToken: string): boolean {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!match) return false;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const separator = decoded.indexOf(':');
  return separator >= 0 && decoded.slice(separator + 1) === requiredToken;
}

/** Runs one request through `git http-backend` and streams its CGI answer back. */
function serveWithBackend(reposDir: string, request: http.IncomingMessage, response: http.ServerResponse): void {
  const url = new URL(request.url ?? '/', 'http://git.invalid');
  const backend = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: reposDir,
      GIT_HTTP_EXPORT_ALL: '1',
      REQUEST_METHOD: request.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: request.headers['content-type'] ?? '',
      HTTP_CONTENT_ENCODING: request.headers['content-encoding'] ?? '',
      GIT_PROTOCOL: String(request.headers['git-protocol'] ?? ''),
      REMOTE_USER: 'x-access-token',
      REMOTE_ADDR: '127.0.0.1',
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  request.pipe(backend.stdin);
  let head = Buffer.alloc(0);
  let headersSent = false;
  backend.stdout.on('data', (chunk: Buffer) => {
    if (headersSent) {
      response.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const separator = line.indexOf(':');
      const name = line.slice(0, separator).trim();
      const value = line.slice(separator + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else if (name) response.setHeader(name, value);
    }
    response.writeHead(status);
    headersSent = true;
    response.write(head.subarray(end + 4));
  });
  backend.on('close', () => {
    if (!headersSent) response.writeHead(502);
    response.end();
  });
}

/**
 * Starts the server. Requests without the token get 401 with a Basic challenge, so a git without credentials fails
 * (with `GIT_TERMINAL_PROMPT=0`) instead of prompting.
 */
export async function startGitHttpServer(options: {
  reposDir: string;
  /** Without it, anyone may clone (a public repository). */
  requiredToken?: string;
  /** Milliseconds to wait before answering each request (a slow code host); read at each request. */
  delayMs?: () => number;
}): Promise<GitHttpServer> {
  const requests: GitHttpServer['requests'] = [];
  const server = http.createServer((request, response) => {
    const authorized = options.requiredToken === undefined || isAuthorized(request.headers.authorization, options.requiredToken);
    requests.push({ method: request.method ?? 'GET', path: request.url ?? '/', authorized });
    if (!authorized) {
      response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="graphx-test-git"', 'Content-Type': 'text/plain' });
      response.end('Authentication required\n');
      return;
    }
    const delayMs = options.delayMs?.() ?? 0;
    if (delayMs > 0) setTimeout(() => serveWithBackend(options.reposDir, request, response), delayMs);
    else serveWithBackend(options.reposDir, request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
