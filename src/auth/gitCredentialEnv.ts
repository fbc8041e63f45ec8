/**
 * How a clone hands an integration token to `git` (docs/internal-contracts.md): through `GIT_CONFIG_*` environment
 * variables, which git reads as if they were configuration but never writes anywhere, so the token is in no URL,
 * no `.git/config` and no file of the build directory.
 */

/**
 * Environment variables that make `git` send `Authorization: Basic base64(x-access-token:<token>)` on every HTTP
 * request. Merge them into the child's environment; do not log them.
 */
export function gitCredentialEnv(token: string): Record<string, string> {
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  return {
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'http.extraHeader',
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
  };
}
