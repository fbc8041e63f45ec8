/**
 * graphx.json for Python apps: which modules are Python (a `.py` file, or a dotted `package.module`), the Python line
 * (`python_version`) and what the app's environment installs (`dependencies`, `pip_config_file`). Read through
 * graphxConfig.ts, which re-exports what is public here.
 */
// A cycle with graphxConfig.ts, harmless: the class is only used when a function runs.
import { GraphxConfigError } from './graphxConfig';

/** The language of a module graphx.json names: a `.py` file or a dotted module (`package.module`) is Python. */
export type ModuleLanguage = 'javascript' | 'python';

/**
 * graphx.json `source` (langgraph-cli's `UvSource`): the app is a uv project or workspace whose `uv.lock` decides
 * what its environment installs.
 */
export interface UvSource {
  kind: 'uv';
  /** The project root (pyproject.toml and uv.lock), relative to graphx.json's directory; `.` when not set. */
  root: string;
  /** The workspace member to deploy; null: the member holding graphx.json, else the root project. */
  package: string | null;
}

/** The Python side of an app: its interpreter line and what its environment installs. */
export interface PythonConfig {
  /** One of OFFERED_PYTHON_VERSIONS (DEFAULT_PYTHON_VERSION when graphx.json names none). */
  version: string;
  /** Requirement strings for the package index, and local folders (relative to graphx.json's directory). */
  dependencies: string[];
  /** A pip configuration file (private indexes), relative to graphx.json's directory, or null. */
  pipConfigFile: string | null;
  /** `dependencies` are installed by pip, or by uv (`"pip_installer": "uv"`; `auto` is pip). */
  installer: 'pip' | 'uv';
  /** A uv project whose uv.lock is installed instead of `dependencies`, or null. */
  source: UvSource | null;
}

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

const JS_EXTENSION = /\.(js|mjs|cjs|ts|mts|cts|jsx|tsx)$/;
const DOTTED_MODULE = /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/;

/** The language of a module path: `.py`, or a dotted name that is not a JavaScript file name, is Python. */
export function moduleLanguage(modulePath: string): { language: ModuleLanguage; module: string | null } {
  if (modulePath.endsWith('.py')) return { language: 'python', module: null };
  if (DOTTED_MODULE.test(modulePath) && !JS_EXTENSION.test(modulePath)) return { language: 'python', module: modulePath };
  return { language: 'javascript', module: null };
}

/**
 * graphx.json `source` as langgraph-cli reads it: `{"kind": "uv", "root", "package"}`, whose dependencies come from
 * pyproject.toml and uv.lock (so `dependencies` may not be named beside it).
 * @throws GraphxConfigError naming the key.
 */
function uvSourceOf(value: Record<string, any>): UvSource | null {
  const source = value.source;
  if (source === undefined || source === null) return null;
  if (value.dependencies !== undefined) {
    throw new GraphxConfigError(
      '"dependencies" cannot be used with "source": {"kind": "uv"}: the dependencies are read from pyproject.toml and uv.lock.',
    );
  }
  return { kind: 'uv', root: source.root ?? '.', package: source.package ?? null };
}

/** The app's Python side: set when a graph or the auth is Python, `python_version` or a uv `source` is named. */
export function pythonConfigOf(value: Record<string, any>, refs: Array<{ language: ModuleLanguage }>): PythonConfig | null {
  const source = uvSourceOf(value);
  if (value.python_version === undefined && !source && !refs.some((ref) => ref.language === 'python')) return null;
  const installer = value.pip_installer === 'uv' ? 'uv' : 'pip';
  if (installer === 'uv' && value.pip_config_file !== undefined) {
    throw new GraphxConfigError(
      '"pip_installer": "uv" does not read "pip_config_file" (a pip configuration); use "pip_installer": "pip" with it.',
    );
  }
  return {
    version: requestedPythonVersion(value.python_version),
    dependencies: value.dependencies ?? [],
    pipConfigFile: value.pip_config_file ?? null,
    installer,
    source,
  };
}
