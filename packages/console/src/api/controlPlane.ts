/** The control plane's public `/v2` API, same origin, with the tab's API key. */
import { FAILED_REVISION_STATUSES, IN_PROGRESS_REVISION_STATUSES } from '@graphx/contract/statuses';
import { apiKey, signOut } from '../session';

/** An answer that was not 2xx, with the server's `detail` turned into a sentence. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type ValidationItem = { loc?: unknown[]; msg?: string };

/** `{"detail": "..."}` or pydantic's `{"detail": [{loc, msg, type}]}` as one readable line. */
export function detailOf(body: unknown, status: number): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((item: ValidationItem) => `${(item.loc ?? []).filter((part) => part !== 'body').join('.')}: ${item.msg ?? 'invalid'}`)
      .join('; ');
  }
  return `The server answered ${status}.`;
}

/** Sends one request; a 401 ends the session (the key was revoked or mistyped). */
export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'X-Api-Key': apiKey() ?? '' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    if (response.status === 401) signOut();
    throw new ApiError(response.status, detailOf(parsed, response.status));
  }
  return parsed as T;
}

export interface Secret {
  name: string;
  value: string;
}

export interface Deployment {
  id: string;
  name: string;
  source: string;
  status: string;
  url: string | null;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  source_config: Record<string, unknown> & {
    repo_url?: string | null;
    install_command?: string | null;
    build_command?: string | null;
  };
  source_revision_config: { repo_ref?: string | null; graphx_config_path?: string | null; image_uri?: string | null };
  secrets: Secret[];
  tracing_project_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface Revision {
  id: string;
  deployment_id: string;
  number?: number;
  status: string;
  status_message: string | null;
  source: string;
  source_revision_config: { repo_ref?: string | null; repo_commit_sha?: string | null; image_ref?: string | null };
  redeployed_from_revision_id?: string | null;
  created_at: string;
  updated_at: string;
}

export interface LogLine {
  id: string;
  timestamp: string;
  level: string;
  message: string;
}

export interface Page<T> {
  resources: T[];
  offset: number | null;
}

const enc = encodeURIComponent;

export const controlPlane = {
  listDeployments: (query: { name_contains?: string; limit?: number; offset?: number } = {}) => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value));
    return request<Page<Deployment>>('GET', `/v2/deployments?${params}`);
  },
  getDeployment: (id: string) => request<Deployment>('GET', `/v2/deployments/${enc(id)}`),
  createDeployment: (body: unknown) => request<Deployment>('POST', '/v2/deployments', body),
  patchDeployment: (id: string, body: unknown) => request<Deployment>('PATCH', `/v2/deployments/${enc(id)}`, body),
  deleteDeployment: (id: string) => request<void>('DELETE', `/v2/deployments/${enc(id)}`),
  listRevisions: (id: string, limit = 20) =>
    request<Page<Revision>>('GET', `/v2/deployments/${enc(id)}/revisions?limit=${limit}`),
  getRevision: (id: string, revisionId: string, waitForChangeFrom?: string) =>
    request<Revision>(
      'GET',
      `/v2/deployments/${enc(id)}/revisions/${enc(revisionId)}` +
        (waitForChangeFrom ? `?wait_for_change_from=${enc(waitForChangeFrom)}&timeout=25` : ''),
    ),
  revisionAction: (id: string, revisionId: string, action: 'retry' | 'interrupt' | 'redeploy') =>
    request<unknown>('POST', `/v2/deployments/${enc(id)}/revisions/${enc(revisionId)}/${action}`),
  revisionLogs: (id: string, revisionId: string, offset: number) =>
    request<{ logs: LogLine[] }>(
      'GET',
      `/v2/deployments/${enc(id)}/revisions/${enc(revisionId)}/logs?order=asc&limit=500&offset=${offset}`,
    ),
  appLogs: (id: string, offset: number) =>
    request<{ logs: LogLine[] }>('GET', `/v2/deployments/${enc(id)}/logs?order=asc&limit=500&offset=${offset}`),
};

/** Revision statuses that still move on their own (CONTRACT §2.3), and those that wait for a retry: the contract's. */
export const IN_PROGRESS: readonly string[] = IN_PROGRESS_REVISION_STATUSES;
export const FAILED: readonly string[] = FAILED_REVISION_STATUSES;
