/** Registry credentials for pulling a user's `image_uri`, from the deployment secrets its resource_spec names. */
import type { RegistryAuth } from './engine';

/**
 * Registry credentials for `imageUri` from the named secrets' values: a Docker config JSON (`{"auths": {host:
 * {username, password} | {auth: base64}}}`, what `docker login` writes and Kubernetes pull secrets hold) whose host
 * matches the image's registry, or `username:password` for any registry. The first that applies wins.
 */
export function registryAuthFor(imageUri: string, secretValues: string[]): RegistryAuth | undefined {
  const registry = registryHost(imageUri);
  for (const value of secretValues) {
    const trimmed = value.trim();
    if (trimmed.startsWith('{')) {
      let parsed: { auths?: Record<string, { username?: string; password?: string; auth?: string }> };
      try {
        parsed = JSON.parse(trimmed) as typeof parsed;
      } catch {
        continue;
      }
      for (const [host, entry] of Object.entries(parsed.auths ?? {})) {
        if (registryHost(`${host.replace(/^https?:\/\//, '').replace(/\/.*$/, '')}/x`) !== registry) continue;
        const [username, password] = entry.auth
          ? splitOnce(Buffer.from(entry.auth, 'base64').toString('utf8'))
          : [entry.username, entry.password];
        if (username && password) return { username, password, serveraddress: registry };
      }
      continue;
    }
    const [username, password] = splitOnce(trimmed);
    if (username && password) return { username, password, serveraddress: registry };
  }
  return undefined;
}

/** The registry host of an image reference (`docker.io` for a name without one), as Docker resolves it. */
export function registryHost(imageUri: string): string {
  const first = imageUri.split('/')[0] ?? '';
  const hasHost = imageUri.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  return hasHost ? first : 'docker.io';
}

function splitOnce(text: string): [string | undefined, string | undefined] {
  const colon = text.indexOf(':');
  return colon > 0 ? [text.slice(0, colon), text.slice(colon + 1)] : [undefined, undefined];
}
