/** graphx.json cannot be used as it is; the message names the file's key and what it accepts. */
export class GraphxConfigError extends Error {
  override name = 'GraphxConfigError';
}
