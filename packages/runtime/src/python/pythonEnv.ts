/**
 * The virtual environment of an app's Python graphs: the executor's pinned packages (python/requirements.txt) and the
 * app's `dependencies`, installed with the executor's pins as constraints so no requirement of the app replaces a
 * package the executor relies on. Environments are cached under `<envsDir>/<digest>`, the digest covering the Python
 * line, the pins, the requirement strings and the manifests of local folders; a new one is built in a temporary
 * folder and renamed into place, so concurrent starts never see half an environment.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigError } from '@graphx/kit/errors';
import type { PythonConfig } from '@graphx/contract/graphxConfig';
import {
  buildIntoCache,
  checkPythonDependencies,
  EXECUTOR_REQUIREMENTS,
  findPython,
  pipInstallArguments,
  pythonEnvDigest,
} from './pythonRequirements';
import { UV_HOST_ENV, UV_PROJECT_HELPER, uvProjectArguments, uvProjectRoot } from './uvProject';
import { ensureUvTool, PIP_ENV, toolsDirBeside, type ToolCommand } from './uvTool';

const run = promisify(execFile);

/**
 * The Python of the app's environment, building it when the cache has none.
 * @param onLog hears pip's output (a build log, a developer's terminal).
 * @throws ConfigError when the install fails (pip's last lines in the message).
 */
export async function ensurePythonEnv(options: {
  envsDir: string;
  config: PythonConfig;
  appDir: string;
  onLog?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}): Promise<string> {
  const { config, appDir } = options;
  checkPythonDependencies(config.dependencies, appDir);
  if (config.source) uvProjectRoot(config.source, appDir, path.parse(appDir).root);
  const { directory } = await buildIntoCache(options.envsDir, pythonEnvDigest(config, appDir), async (building) => {
    const base = await findPython(config.version);
    await run(base, ['-m', 'venv', building], { timeout: 120_000 });
    if (config.source) {
      const env = options.env ?? process.env;
      const uv = await ensureUvTool(toolsDirBeside(options.envsDir), base, (command) => runTool(command, env));
      const output = await installUvProject(path.join(building, 'bin', 'python'), uv, config, appDir, env);
      for (const line of output.split('\n')) if (line.trim()) options.onLog?.(line);
      return;
    }
    const { args, importable } = pipInstallArguments(config, appDir, { editable: true });
    const pipEnv: NodeJS.ProcessEnv = { ...(options.env ?? process.env), ...PIP_ENV };
    if (config.pipConfigFile) pipEnv.PIP_CONFIG_FILE = path.resolve(appDir, config.pipConfigFile);
    const pipArgs = ['-m', 'pip', '-q', ...args];
    const { stdout, stderr } = await run(path.join(building, 'bin', 'python'), pipArgs, {
      cwd: appDir,
      env: pipEnv,
      timeout: 15 * 60_000,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stderr?: string; message: string }) => {
      const tail = (error.stderr ?? error.message).trim().split('\n').slice(-8).join('\n');
      throw new ConfigError(`graphx.json "dependencies" could not be installed:\n${tail}`);
    });
    for (const line of `${stdout}${stderr}`.split('\n')) if (line.trim()) options.onLog?.(line);
    if (importable.length > 0) {
      const { stdout: sitePackages } = await run(path.join(building, 'bin', 'python'), [
        '-c',
        'import sysconfig; print(sysconfig.get_paths()["purelib"])',
      ]);
      fs.writeFileSync(path.join(sitePackages.trim(), 'graphx_app_folders.pth'), `${importable.join('\n')}\n`);
    }
  });
  return path.join(directory, 'bin', 'python');
}

/** A command of uv's install (uvTool.ts) in `env`; a failure is the ConfigError of the uv project's install. */
async function runTool(command: ToolCommand, env: NodeJS.ProcessEnv): Promise<void> {
  await run(command.file, command.args, {
    env: { ...env, ...command.env },
    timeout: 15 * 60_000,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error) => {
    throw uvInstallFailure(error);
  });
}

/** The ConfigError of a failed uv install: its output's last lines. */
function uvInstallFailure(error: unknown): ConfigError {
  const { stderr, stdout, message } = error as { stderr?: string; stdout?: string; message: string };
  const tail = `${stdout ?? ''}${stderr ?? message}`.trim().split('\n').slice(-8).join('\n');
  return new ConfigError(`graphx.json "source" (uv.lock) could not be installed:\n${tail}`);
}

/**
 * A uv project's lock into the environment of `python` (graphx.json "source") by the helper the builds run, with
 * `uv` (the shared pinned tool, uvTool.ts). @returns the output. @throws ConfigError with the last lines.
 */
async function installUvProject(
  python: string,
  uv: string,
  config: PythonConfig,
  appDir: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const source = config.source!;
  const args = uvProjectArguments({
    uv,
    root: path.resolve(appDir, source.root),
    configDir: appDir,
    pins: EXECUTOR_REQUIREMENTS,
    source,
  });
  const options = { cwd: appDir, env: { ...env, ...UV_HOST_ENV }, timeout: 15 * 60_000, maxBuffer: 64 * 1024 * 1024 };
  try {
    const { stdout, stderr } = await run(python, [UV_PROJECT_HELPER, ...args], options);
    return `${stdout}${stderr}`;
  } catch (error) {
    throw uvInstallFailure(error);
  }
}
