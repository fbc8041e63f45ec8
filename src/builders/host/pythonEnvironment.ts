/**
 * A Python app's virtual environment, made by the process runner's BUILD step (the runtime then starts its executor
 * with it and installs nothing): the executor's pins and the app's `dependencies`, the pins as pip constraints so no
 * requirement replaces a package the server relies on. Environments are kept under `<dataDir>/python-envs/<digest>`,
 * the digest covering the tenant, the Python line, the pins, the requirement strings and the local folders' manifests;
 * a later build with the same digest reuses the directory. Built beside it and renamed into place, so a build that
 * dies leaves no half environment to reuse.
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
} from '@graphx/runtime/python/pythonRequirements';
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

/**
 * Builds (or finds) the environment and returns its interpreter.
 * @param run runs one command as a step of the build (its log, deadline, cancellation and stall watch).
 * @throws BuildFailed naming the key at fault (a reserved dependency, a Python line not available), or pip's failure.
 */
export async function buildPythonEnvironment(options: {
  envsDir: string;
  tenantId: string;
  appDir: string;
  python: PythonConfig;
  /** The interpreters builds may use (GRAPHX_PYTHON_INTERPRETERS); unset: those found on this machine. */
  interpreters?: string[];
  progress: BuildProgress;
  run: (command: StepCommand) => Promise<void>;
}): Promise<string> {
  const { python, appDir, progress } = options;
  progress.setPhase('python', `Python ${python.version} environment`);
  const base = await orBuildFailed(progress, async () => {
    checkPythonDependencies(python.dependencies, appDir);
    return findPython(python.version, options.interpreters);
  });
  const digest = pythonEnvDigest(python, appDir, options.tenantId);
  const { directory, built } = await buildIntoCache(options.envsDir, digest, async (building) => {
    await options.run({ display: `${base} -m venv <environment ${digest}>`, file: base, args: ['-m', 'venv', building] });
    const { args } = pipInstallArguments(python, appDir, { editable: false });
    const env: Record<string, string> = { PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1', PIP_PROGRESS_BAR: 'off' };
    if (python.pipConfigFile) env.PIP_CONFIG_FILE = path.resolve(appDir, python.pipConfigFile);
    await options.run({
      display: `pip ${args.join(' ')}`,
      file: path.join(building, 'bin', 'python'),
      args: ['-m', 'pip', ...args],
      env,
    });
  });
  progress.line(
    built
      ? `Python environment ${digest} built; later builds with the same dependencies reuse it.`
      : `Python environment ${digest} reused: the dependencies are those of an earlier build; nothing installed.`,
  );
  return path.join(directory, 'bin', 'python');
}
