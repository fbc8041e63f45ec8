/**
 * The CLI's client of the public `/v2` API (never the database). Settings come from GRAPHX_API_URL and
 * GRAPHX_API_KEY or flags; a key is never sent over plain http to another machine unless `--allow-insecure`.
 */
import net from 'node:net';
import { EXIT } from '@graphx/contract/exitCodes';
import { CliError } from './cliError';

export interface ApiSettings {
  apiUrl: string;
  apiKey: string;
}

const DEFAULT_API_URL = 'http://127.0.0.1:8080';

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  return host === '::1';
}

/** Reads and checks the settings; a problem is a usage/config error (exit 2) naming what to set. */
export function resolveSettings(
  options: { apiUrl?: string; apiKey?: string; allowInsecure?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): ApiSettings {
  const apiUrl = (options.apiUrl ?? env.GRAPHX_API_URL ?? DEFAULT_API_URL).replace(/\/+$/, '');
  const apiKey = options.apiKey ?? env.GRAPHX_API_KEY ?? '';
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    throw new CliError(EXIT.usage, `GRAPHX_API_URL is not a URL: ${apiUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(EXIT.usage, `GRAPHX_API_URL must be http(s), not ${url.protocol}`);
  if (!apiKey) throw new CliError(EXIT.usage, 'No API key: set GRAPHX_API_KEY (or pass --api-key).');
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !options.allowInsecure) {
    throw new CliError(
      EXIT.usage,
      `Refusing to send the API key over plain http to ${url.host}; use https, or pass --allow-insecure if this network is trusted.`,
    );
  }
  return { apiUrl, apiKey };
}

export class ApiClient {
  constructor(private readonly settings: ApiSettings) {}

  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.request<T>('GET', path, undefined, signal);
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, body);
  }

  delete(path: string): Promise<unknown> {
    return this.request('DELETE', path);
  }

  /** Sends one request; maps "unreachable" and 401/403 to exit 4, other refusals to exit 2 with the API's detail. */
  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.settings.apiUrl}${path}`, {
        method,
        headers: {
          'X-Api-Key': this.settings.apiKey,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        EXIT.unreachable,
        `API unreachable at ${this.settings.apiUrl}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
      );
    }
    const text = await response.text();
    const parsed = text ? safeJson(text) : undefined;
    if (response.ok) return parsed as T;
    const detail = describeDetail(parsed) ?? (text.slice(0, 200) || response.statusText);
    if (response.status === 401 || response.status === 403)
      throw new CliError(EXIT.unreachable, `API refused the key (${response.status}): ${detail}`);
    if (response.status >= 500) throw new CliError(EXIT.unreachable, `API error ${response.status}: ${detail}`);
    throw new CliError(EXIT.usage, `${method} ${path.split('?')[0]} answered ${response.status}: ${detail}`);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The API's `{"detail": ...}`: a sentence, or pydantic's list of `{loc, msg}`. */
function describeDetail(body: unknown): string | null {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail))
    return detail.map((item: { loc?: unknown[]; msg?: string }) => `${(item.loc ?? []).join('.')}: ${item.msg}`).join('; ');
  return null;
}
