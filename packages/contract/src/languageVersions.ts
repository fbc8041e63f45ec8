/** The language lines apps run on: what graphx.json `node_version` and `python_version` may ask for. */
import { GraphxConfigError } from './graphxConfigError';

/** The Python lines apps run on (graphx.json `python_version`). */
export const OFFERED_PYTHON_VERSIONS = ['3.11', '3.12', '3.13'] as const;
export const DEFAULT_PYTHON_VERSION = '3.11';

/**
 * graphx.json `python_version` as an offered line (`"3.12"`, `3.12`), the default when not set.
 * @throws GraphxConfigError naming the versions offered, for any other value.
 */
export function requestedPythonVersion(value: unknown): string {
  if (value === undefined || value === null) return DEFAULT_PYTHON_VERSION;
  const line = /^\s*(3\.\d+)(\.\d+)?\s*$/.exec(String(value))?.[1];
  if (!line || !(OFFERED_PYTHON_VERSIONS as readonly string[]).includes(line)) {
    throw new GraphxConfigError(
      `"python_version" ${JSON.stringify(value)} is not offered: use ${OFFERED_PYTHON_VERSIONS.join(', ')} (default ${DEFAULT_PYTHON_VERSION}).`,
    );
  }
  return line;
}

/** The Node majors images are offered in (graphx.json `node_version`): the LTS lines the npm registry ships. */
export const OFFERED_NODE_MAJORS = [20, 22, 24] as const;
/** The Node major of images when graphx.json names none: the active LTS. */
export const DEFAULT_NODE_MAJOR = 24;

/**
 * graphx.json `node_version` as a major (`"22"`, `22`; `"22.11"` means 22 as the anchor reads it), or null when it is
 * not set. @throws GraphxConfigError naming the versions offered, for any other value.
 */
export function requestedNodeMajor(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  const major = Number(/^\s*(\d+)(\.\d+)*\s*$/.exec(String(value))?.[1]);
  if (!(OFFERED_NODE_MAJORS as readonly number[]).includes(major)) {
    throw new GraphxConfigError(
      `"node_version" ${JSON.stringify(value)} is not offered: use ${OFFERED_NODE_MAJORS.join(', ')} (default ${DEFAULT_NODE_MAJOR}).`,
    );
  }
  return major;
}
