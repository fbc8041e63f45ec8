/**
 * The Python environment a process-runner build made for a revision, handed from the builder to the instances it
 * runs: a file beside the clone naming the interpreter, which the runner passes to the app as GRAPHX_PYTHON.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildPaths } from './revisionSpec';

const fileOf = (dataDir: string, revisionId: string) => path.join(buildPaths(dataDir, revisionId).root, 'python-env.json');

/** Records `python` (the environment's interpreter) as the revision's. */
export function recordBuiltPython(dataDir: string, revisionId: string, python: string): void {
  fs.writeFileSync(fileOf(dataDir, revisionId), JSON.stringify({ python }));
}

/** The interpreter the revision's build made, or null (no Python graphs, or a build from before builds made one). */
export function builtPython(dataDir: string, revisionId: string): string | null {
  try {
    const { python } = JSON.parse(fs.readFileSync(fileOf(dataDir, revisionId), 'utf8')) as { python?: unknown };
    return typeof python === 'string' && fs.existsSync(python) ? python : null;
  } catch {
    return null;
  }
}
