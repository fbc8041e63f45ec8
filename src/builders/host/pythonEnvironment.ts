/**
 * A Python app's virtual environment, made by the process runner's BUILD step (the runtime then starts its executor
 * with it and installs nothing): the executor's pins and the app's `dependencies`, the pins as pip constraints so no
 * requirement replaces a package the server relies on. Environments are kept under `<dataDir>/python-envs/<digest>`,
 * the digest covering the tenant, the Python line, the pins, the requirement strings and the local folders' manifests;
 * a later build with the same digest reuses the directory. Built beside it and renamed into place, so a build that
 * dies leaves no half environment to reuse. A uv project (graphx.json "source") is installed from its uv.lock by
 * python/uv_project.py with the shared pinned uv (uvTool.ts), the lock's digest keying the environment.
 */
import path from 'node:path';
import { ConfigError } from '@graphx/kit/errors';
import type { PythonConfig } from '@graphx/contract/pythonConfig';
import {
  buildIntoCache,
  checkPythonDependencies,
  findPython,
  pipInstallArguments,
  pythonEnvDigest,
  EXECUTOR_REQUIREMENTS,
} from '@graphx/runtime/python/pythonRequirements';
import { usesUv, UV_HOST_ENV, UV_PROJECT_HELPER, uvProjectArguments, uvProjectRoot } from '@graphx/runtime/python/uvProject';
import { ensureUvTool, PIP_ENV, toolsDirBeside } from '@graphx/runtime/python/uvTool';
import { BuildFailed, type BuildProgress } from '../builder';
import type { StepCommand } from './hostBuilder';

/** A ConfigError of the checks becomes the build's failure, in its log too. */
async function orBuildFailed<T>(progress: BuildProgress, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    progress.line(error.message, 'error');
    throw new BuildFailed(error.message);
  }
}

interface PythonBuild {
  envsDir: string;
  tenantId: string;
  appDir: string;
  /** The clone: a uv project's root may be above graphx.json, never outside it. */
  repoDir: string;
  python: PythonConfig;
  /** The interpreters builds may use (GRAPHX_PYTHON_INTERPRETERS); unset: those found on this machine. */
  interpreters?: string[];
  progress: BuildProgress;
  run: (command: StepCommand) => Promise<void>;
}

/** The uv project's helper as a build step, run by the environment's interpreter `python`. */
function uvProjectStep(options: PythonBuild, uv: string, python: string, checkOnly: boolean): StepCommand {
  const source = options.python.source!;
  const root = path.resolve(options.appDir, source.root);
  const args = uvProjectArguments({ uv, root, configDir: options.appDir, pins: EXECUTOR_REQUIREMENTS, source, checkOnly });
  const display = `uv_project.py${checkOnly ? ' --check-only' : ''} (uv.lock at "source.root" ${source.root})`;
  return { display, file: python, args: [UV_PROJECT_HELPER, ...args], env: UV_HOST_ENV };
}

/** The install into the new environment `building`: a uv project's lock, or `dependencies` by pip or uv. */
async function install(options: PythonBuild, building: string, uv: string | null): Promise<void> {
  const { python, appDir } = options;
  const interpreter = path.join(building, 'bin', 'python');
  if (python.source) return options.run(uvProjectStep(options, uv!, interpreter, false));
  const { args } = pipInstallArguments(python, appDir, { editable: false });
  if (uv) {
    const uvArgs = ['pip', ...args.slice(0, 1), '--python', interpreter, ...args.slice(1)];
    return options.run({ display: `uv ${uvArgs.join(' ')}`, file: uv, args: uvArgs, env: UV_HOST_ENV });
  }
  const env: Record<string, string> = { ...PIP_ENV };
  if (python.pipConfigFile) env.PIP_CONFIG_FILE = path.resolve(appDir, python.pipConfigFile);
  await options.run({ display: `pip ${args.join(' ')}`, file: interpreter, args: ['-m', 'pip', ...args], env });
}

/**
 * Builds (or finds) the environment and returns its interpreter. A uv project's lock is checked against its
 * pyproject.toml by every build, a cached environment's too.
 * @param run runs one command as a step of the build (its log, deadline, cancellation and stall watch).
 * @throws BuildFailed naming the key at fault (a reserved dependency, a Python line not available), or pip's or uv's
 *   failure (a uv.lock out of date, a lock pinning a package the server relies on).
 */
export async function buildPythonEnvironment(options: PythonBuild): Promise<string> {
  const { python, appDir, progress } = options;
  progress.setPhase('python', `Python ${python.version} environment`);
  const base = await orBuildFailed(progress, async () => {
    checkPythonDependencies(python.dependencies, appDir);
    if (python.source) uvProjectRoot(python.source, appDir, options.repoDir);
    return findPython(python.version, options.interpreters);
  });
  const uv = usesUv(python) ? await ensureUvTool(toolsDirBeside(options.envsDir), base, options.run) : null;
  const digest = pythonEnvDigest(python, appDir, options.tenantId);
  const { directory, built } = await buildIntoCache(options.envsDir, digest, async (building) => {
    await options.run({ display: `${base} -m venv <environment ${digest}>`, file: base, args: ['-m', 'venv', building] });
    await install(options, building, uv);
  });
  const interpreter = path.join(directory, 'bin', 'python');
  if (!built && python.source) await options.run(uvProjectStep(options, uv!, interpreter, true));
  progress.line(
    built
      ? `Python environment ${digest} built; later builds with the same dependencies reuse it.`
      : `Python environment ${digest} reused: the dependencies are those of an earlier build; nothing installed.`,
  );
  return interpreter;
}
