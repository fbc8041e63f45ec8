/**
 * How the runtime reaches the control plane: with its deployment-scoped service token, never a tenant key
 * (docs/internal-contracts.md, "Runtime → control plane"). API-key verdicts are cached briefly so a stream does not
 * wait on the control plane per request; concurrent checks of one key share one call.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import type { TraceRecord } from './storage/runStore';

export interface KeyVerdict {
  valid: boolean;
  tenantId?: string;
  owner?: string;
}

const VALID_TTL_MS = 30_000;
const INVALID_TTL_MS = 5_000;
const REQUEST_TIMEOUT_MS = 5_000;

/** The control plane could not answer (network, 5xx): callers decide whether to retry or refuse. */
export class ControlPlaneUnavailableError extends Error {
  override name = 'ControlPlaneUnavailableError';
}

export class ControlPlaneClient {
  private readonly verdicts = new Map<string, { verdict: KeyVerdict; expiresAt: number }>();
  private readonly inFlight = new Map<string, Promise<KeyVerdict>>();

  constructor(
    private readonly baseUrl: string,
    private readonly serviceToken: string,
    /** In a container the control plane is a unix socket bind-mounted in (no route to the host's loopback). */
    private readonly socketPath: string | null = null,
  ) {}

  private async post(path: string, body: unknown): Promise<Response> {
    let response: Response;
    try {
      const headers = { authorization: `Bearer ${this.serviceToken}`, 'content-type': 'application/json' };
      response = this.socketPath
        ? await postOverSocket(this.socketPath, `${this.baseUrl}${path}`, headers, JSON.stringify(body))
        : await fetch(`${this.baseUrl}${path}`, {
            method: 'POST',
            headers,
            body: JSON.stringify(body),
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
    } catch (error) {
      throw new ControlPlaneUnavailableError(`control plane unreachable: ${(error as Error).message}`);
    }
    if (response.status >= 500 || response.status === 401) {
      await response.body?.cancel();
      throw new ControlPlaneUnavailableError(`control plane answered ${response.status} to ${path}`);
    }
    return response;
  }

  /**
   * Whether `apiKey` is a key of this deployment's tenant. A stale positive verdict is used while the control plane
   * is unreachable, so an outage does not lock out users already seen.
   * @throws ControlPlaneUnavailableError when the control plane cannot answer and nothing is cached.
   */
  async verifyApiKey(apiKey: string): Promise<KeyVerdict> {
    const cacheKey = crypto.createHash('sha256').update(apiKey).digest('hex');
    const cached = this.verdicts.get(cacheKey);
    if (cached && cached.expiresAt > Date.now()) return cached.verdict;
    const pending = this.inFlight.get(cacheKey);
    if (pending) return pending;
    const call = (async () => {
      try {
        const response = await this.post('/internal/v1/api-keys/verify', { api_key: apiKey });
        const body = (await response.json()) as { valid?: boolean; tenant_id?: string; owner?: string };
        const verdict: KeyVerdict = body.valid ? { valid: true, tenantId: body.tenant_id, owner: body.owner } : { valid: false };
        if (this.verdicts.size > 10_000) this.verdicts.clear();
        this.verdicts.set(cacheKey, { verdict, expiresAt: Date.now() + (verdict.valid ? VALID_TTL_MS : INVALID_TTL_MS) });
        return verdict;
      } catch (error) {
        if (cached?.verdict.valid) return cached.verdict;
        throw error;
      } finally {
        this.inFlight.delete(cacheKey);
      }
    })();
    this.inFlight.set(cacheKey, call);
    return call;
  }

  /**
   * Sends run records to the deployment's tracing project (idempotent on run_id there).
   * @throws ControlPlaneUnavailableError when they were not accepted.
   */
  async recordRuns(runs: TraceRecord[]): Promise<void> {
    const response = await this.post('/internal/v1/runs', { runs });
    await response.body?.cancel();
    if (response.status !== 202)
      throw new ControlPlaneUnavailableError(`control plane answered ${response.status} to /internal/v1/runs`);
  }
}

/** A POST over a unix socket, answered as a fetch Response (fetch itself cannot dial a socket without undici). */
function postOverSocket(socketPath: string, url: string, headers: Record<string, string>, body: string): Promise<Response> {
  const { pathname, search } = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        socketPath,
        path: `${pathname}${search}`,
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
        resolve(new Response(Readable.toWeb(res) as ReadableStream, { status: res.statusCode ?? 502, headers: responseHeaders }));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
    request.end(body);
  });
}
