/**
 * Which OAuth endpoint URLs we accept. Outside the embedded stack only `https`; plain `http` to the loopback host is
 * allowed when GRAPHX_ALLOW_INSECURE_OAUTH=1 (tests, local development), because codes and secrets travel on it.
 */
import { ValidationError } from '@graphx/kit/errors';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Returns why `value` is not an acceptable OAuth endpoint, or null when it is. */
export function oauthUrlProblem(value: string, allowInsecure: boolean): { msg: string; type: string } | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { msg: 'Input should be a valid URL', type: 'url_parsing' };
  }
  if (url.username || url.password) return { msg: 'URL must not contain credentials', type: 'url_parsing' };
  if (url.hash) return { msg: 'URL must not contain a fragment', type: 'url_parsing' };
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && allowInsecure && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return {
    msg: allowInsecure ? "URL scheme should be 'https' (or 'http' to 127.0.0.1 or localhost)" : "URL scheme should be 'https'",
    type: 'url_scheme',
  };
}

/**
 * Checks the given body fields (e.g. `auth_url`, `token_url`) and throws one 422 naming every bad field.
 * @throws ValidationError with `loc` `["body", <field>]`.
 */
export function assertOAuthUrls(fields: Record<string, string | null | undefined>, allowInsecure: boolean): void {
  const issues = Object.entries(fields).flatMap(([field, value]) => {
    if (value === null || value === undefined) return [];
    const problem = oauthUrlProblem(value, allowInsecure);
    return problem ? [{ loc: ['body', field], ...problem }] : [];
  });
  if (issues.length > 0) throw new ValidationError(issues);
}
