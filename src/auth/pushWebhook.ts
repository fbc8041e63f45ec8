/**
 * The push webhook of a code-host integration (issue 24, point 6), as code-hosting apps send it: GitHub's
 * (`X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, `X-GitHub-Event`, `X-GitHub-Delivery`) and the same
 * from Gitea and Forgejo (`X-Gitea-Signature: <hex>`, …). The signature is checked with the provider's webhook secret
 * over the raw body, in constant time, before anything in the payload is believed.
 */
import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** What a push names, once its signature holds. */
export interface PushEvent {
  /** The installation of the code-hosting app the push was sent for (its integrations), when the payload says. */
  installationId: number | null;
  /** The repository's URLs as the code host gives them (clone, HTML, SSH, git). */
  repositoryUrls: string[];
  /** `refs/heads/<branch>` or `refs/tags/<tag>`. */
  ref: string;
  /** The commit the ref points at after the push. */
  commitSha: string;
}

function header(headers: IncomingHttpHeaders, ...names: string[]): string | null {
  for (const name of names) {
    const value = headers[name];
    if (typeof value === 'string' && value) return value;
  }
  return null;
}

/** The event name (`push`, `ping`, …), or null. */
export function webhookEvent(headers: IncomingHttpHeaders): string | null {
  return header(headers, 'x-github-event', 'x-gitea-event', 'x-forgejo-event');
}

/** The delivery's id (a redelivery repeats it); without one, the body's digest (a redelivery resends the body). */
export function deliveryId(headers: IncomingHttpHeaders, rawBody: Buffer): string {
  return (
    header(headers, 'x-github-delivery', 'x-gitea-delivery', 'x-forgejo-delivery') ??
    `sha256:${crypto.createHash('sha256').update(rawBody).digest('hex')}`
  );
}

/** True when the delivery carries a valid HMAC-SHA256 signature of `rawBody` under `secret`. */
export function signatureValid(headers: IncomingHttpHeaders, rawBody: Buffer, secret: string): boolean {
  const given = header(headers, 'x-hub-signature-256', 'x-gitea-signature', 'x-forgejo-signature');
  if (!given) return false;
  const hex = given.startsWith('sha256=') ? given.slice('sha256='.length) : given;
  if (!/^[0-9a-f]{64}$/i.test(hex)) return false;
  const expected = crypto.createHmac('sha256', secret).update(rawBody).digest();
  return crypto.timingSafeEqual(expected, Buffer.from(hex, 'hex'));
}

const ZERO_SHA = /^0+$/;

/** The push a payload describes, or null when it moves no ref to a commit (a deleted branch, another shape). */
export function parsePush(body: unknown): PushEvent | null {
  if (!body || typeof body !== 'object') return null;
  const payload = body as {
    ref?: unknown;
    after?: unknown;
    deleted?: unknown;
    installation?: { id?: unknown };
    repository?: Record<string, unknown>;
  };
  if (typeof payload.ref !== 'string' || typeof payload.after !== 'string') return null;
  if (payload.deleted === true || ZERO_SHA.test(payload.after) || !/^[0-9a-f]{40,64}$/i.test(payload.after)) return null;
  const repository = payload.repository ?? {};
  const repositoryUrls = ['clone_url', 'html_url', 'ssh_url', 'git_url', 'url']
    .map((key) => repository[key])
    .filter((url): url is string => typeof url === 'string' && url.length > 0);
  const installation = payload.installation?.id;
  return {
    installationId: typeof installation === 'number' && Number.isSafeInteger(installation) ? installation : null,
    repositoryUrls,
    ref: payload.ref,
    commitSha: payload.after.toLowerCase(),
  };
}

/** A repository URL reduced to what identifies it: host (lowercase) and path, without `.git`, credentials or slash. */
export function repositoryKey(url: string): string {
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.+)$/.exec(url);
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    return `${(scp[1] as string).toLowerCase()}/${(scp[2] as string).replace(/\.git\/?$/, '').replace(/\/+$/, '')}`;
  }
  try {
    const parsed = new URL(url);
    const path = parsed.pathname.replace(/\/+$/, '').replace(/\.git$/, '');
    return `${parsed.host.toLowerCase()}${path}`;
  } catch {
    return url;
  }
}

/** True when a deployment following `repoRef` (a branch or tag name, or a full ref) is moved by a push to `ref`. */
export function refFollowed(repoRef: string, ref: string): boolean {
  return repoRef === ref || ref === `refs/heads/${repoRef}` || ref === `refs/tags/${repoRef}`;
}
