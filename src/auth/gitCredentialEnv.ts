/**
 * How a clone hands configuration (and an integration token) to `git` (docs/internal-contracts.md): through
 * `GIT_CONFIG_*` environment variables, which git reads as if they were configuration but never writes anywhere, so
 * the token is in no URL, no `.git/config` and no file of the build directory.
 */

/** `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` for the given entries, in order. */
export function gitConfigEnv(entries: Array<[key: string, value: string]>): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length) };
  entries.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}

/** The header that makes a code host accept an installation token: `Authorization: Basic base64(x-access-token:…)`. */
export function gitCredentialHeader(token: string): string {
  return `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
}

/** Environment variables that make `git` send the token's header on every HTTP request. Do not log them. */
export function gitCredentialEnv(token: string): Record<string, string> {
  return gitConfigEnv([['http.extraHeader', gitCredentialHeader(token)]]);
}
