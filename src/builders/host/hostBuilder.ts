/**
 * The process runner's builder: the install command (default chosen by the lock file) and the build command, each
 * `sh -c` in the application directory with a clean environment: the deployment's secrets, a minimal PATH and
 * HOME = `$dataDir/build-home` (shared, so npm's cache stays warm across builds). None of the control plane's own
 * variables (database URL, secret key, Temporal address) can reach a repository's scripts. The lock file's own
 * install is cached per tenant (dependencyCache.ts). Builds here are NOT isolated (see the process runner's warning).
 */
import fs from 'node:fs';
import path from 'node:path';
import { groupCpuTicks, minimalPath } from '@graphx/kit/os/processes';
import { runCommand } from '@graphx/kit/os/runCommand';
import type { GraphxConfig } from '../../config';
import { buildPaths, type RevisionSpec } from '../../pipeline/revisionSpec';
import { BuildCancelled, BuildFailed, type AppToBuild, type BuildContext, type RevisionBuilder } from '../builder';
import { defaultInstallCommand, ensurePackageManagerShims } from '../packageManagers';
import { watchForStall, type StallWatch } from '../stallWatch';
import { dependencyCacheKey, restoreDependencies, saveDependencies } from './dependencyCache';
import { buildPythonEnvironment } from './pythonEnvironment';
import { prunePythonEnvironments } from './pythonEnvPruning';
import { recordBuiltPython } from '../../pipeline/builtPython';
import type { PythonConfig } from '@graphx/contract/pythonConfig';

/** The environment of install and build commands: secrets, then PATH and HOME (which secrets may not override). */
export function buildEnvironment(dataDir: string, spec: RevisionSpec): Record<string, string> {
  const home = path.join(dataDir, 'build-home');
  fs.mkdirSync(home, { recursive: true });
  const env: Record<string, string> = {};
  for (const secret of spec.secrets) env[secret.name] = secret.value;
  // yarn and pnpm ship with the platform: their shims come first, so a lock file's tool is always found.
  env.PATH = `${ensurePackageManagerShims(dataDir)}:${minimalPath()}`;
  env.HOME = home;
  return env;
}

/** One command of a build: `sh -c <command>` (install and build commands) or a program and its arguments. */
export interface StepCommand {
  /** What the build log shows (`$ <display>`). */
  display: string;
  file: string;
  args: string[];
  /** Variables added to the build environment for this command. */
  env?: Record<string, string>;
}

/** A Python environment used within this long is never pruned (a build may be using it). */
const PYTHON_ENV_GRACE_MS = 60 * 60 * 1000;

const shell = (command: string): StepCommand => ({ display: command, file: '/bin/sh', args: ['-c', command] });

interface BuildStep {
  appDir: string;
  env: Record<string, string>;
  deadline: number;
  pidFile: string;
  stall: StallWatch;
  context: BuildContext;
}

export class HostBuilder implements RevisionBuilder {
  readonly runner = 'process' as const;

  constructor(
    private readonly config: Pick<GraphxConfig, 'dataDir' | 'buildTimeoutSeconds' | 'buildStallSeconds' | 'pythonInterpreters'>,
  ) {}

  earlierBuild(): Promise<null> {
    // A process-runner build leaves nothing but its directory, which a redeploy builds again.
    return Promise.resolve(null);
  }

  reuseEarlier(): Promise<void> {
    return Promise.reject(new Error('The host builder has no earlier builds to reuse.'));
  }

  pullImage(spec: RevisionSpec): Promise<void> {
    return Promise.reject(
      new BuildFailed(
        `A '${spec.source}' revision runs image ${spec.imageUri ?? '(none)'}, which needs the container runner ` +
          '(GRAPHX_RUNNER=container and a container engine); this worker runs apps as processes.',
      ),
    );
  }

  async removeDeploymentArtefacts(_deploymentId: string, revisionIds: string[]): Promise<void> {
    // Build directories are the clones, which the teardown removes for every builder. Python environments are shared
    // between revisions with the same dependencies: those no other build uses (and not used lately) go.
    prunePythonEnvironments(this.config.dataDir, {
      exceptRevisions: revisionIds,
      graceMs: Math.max(PYTHON_ENV_GRACE_MS, 2 * this.config.buildTimeoutSeconds * 1000),
    });
  }

  async build(spec: RevisionSpec, { configFile, config }: AppToBuild, context: BuildContext): Promise<void> {
    const { dataDir } = this.config;
    const appDir = path.dirname(configFile);
    const env = buildEnvironment(dataDir, spec);
    const deadline = Date.now() + this.config.buildTimeoutSeconds * 1000;
    const installCommand = spec.sourceConfig.install_command ?? defaultInstallCommand(appDir);
    // Only the lock file's own install is cached: a custom install command may do anything.
    const cacheRoot = path.join(dataDir, 'dependency-cache');
    const cacheKey =
      installCommand && !spec.sourceConfig.install_command ? dependencyCacheKey(appDir, installCommand, spec.tenantId) : null;
    const restored = cacheKey ? await restoreDependencies(cacheRoot, cacheKey, appDir) : false;
    if (restored)
      context.progress.line(
        `Dependencies unchanged since an earlier build (same lock file): reused them instead of \`${installCommand}\`.`,
      );
    const pidFile = path.join(buildPaths(dataDir, spec.revisionId).root, 'build.pid');
    const stall = watchForStall(context.progress, {
      limitSeconds: this.config.buildStallSeconds,
      cpuTicks: () => {
        const pgid = Number(fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8') : 0);
        return pgid > 0 ? groupCpuTicks(pgid) : null;
      },
    });
    const step: BuildStep = { appDir, env, deadline, pidFile, stall, context };
    try {
      if (installCommand && !restored) {
        await this.runStep('install', shell(installCommand), step);
        if (cacheKey) await saveDependencies(cacheRoot, cacheKey, appDir);
      }
      if (config.python) await this.buildPython(spec, config.python, step);
      const buildCommand = spec.sourceConfig.build_command;
      if (buildCommand) await this.runStep('build', shell(buildCommand), step);
    } finally {
      stall.stop();
    }
    context.progress.setPhase('done', 'Build finished.');
  }

  /** The app's Python environment, built or found in the cache; the runtime is told where (recordBuiltPython). */
  private async buildPython(spec: RevisionSpec, python: PythonConfig, step: BuildStep): Promise<void> {
    const interpreter = await buildPythonEnvironment({
      envsDir: path.join(this.config.dataDir, 'python-envs'),
      tenantId: spec.tenantId,
      appDir: step.appDir,
      repoDir: buildPaths(this.config.dataDir, spec.revisionId).src,
      python,
      interpreters: this.config.pythonInterpreters,
      progress: step.context.progress,
      run: (command) => this.runStep('python', command, step),
    });
    recordBuiltPython(this.config.dataDir, spec.revisionId, interpreter);
  }

  /** One command of the build; throws BuildFailed when it fails, times out or stalls. */
  private async runStep(phase: string, step: StepCommand, build: BuildStep): Promise<void> {
    const { appDir, env, deadline, pidFile, stall, context } = build;
    const { progress } = context;
    const command = step.display;
    progress.setPhase(phase, `$ ${command}`);
    const output: string[] = [];
    const result = await runCommand({
      file: step.file,
      args: step.args,
      cwd: appDir,
      env: { ...env, ...step.env },
      deadline,
      signal: AbortSignal.any([context.cancelled, stall.signal]),
      pidFile,
      onLine: (line, stream) => {
        output.push(line);
        if (output.length > 50) output.shift();
        progress.line(line, stream === 'stderr' ? 'warn' : 'info');
      },
    });
    if (result.cancelled && stall.message) {
      progress.line(stall.message, 'error');
      throw new BuildFailed(progress.redact(stall.message));
    }
    if (result.cancelled) {
      progress.line(`Cancelled: killed \`${command}\` and its processes.`, 'warn');
      throw new BuildCancelled(`\`${command}\` was cancelled.`);
    }
    const last =
      progress.redact(
        output
          .filter((line) => line.trim() !== '')
          .slice(-10)
          .join('\n'),
      ) || '(no output)';
    if (result.timedOut) {
      const message = `\`${command}\` did not finish within the ${this.config.buildTimeoutSeconds} s build time limit: ${last}`;
      progress.line(message, 'error');
      throw new BuildFailed(message);
    }
    if (result.exitCode !== 0) {
      const how = result.exitCode === null ? `was killed by ${result.signal}` : `exited with code ${result.exitCode}`;
      const message = `\`${progress.redact(command)}\` ${how}: ${last}`;
      progress.line(message, 'error');
      throw new BuildFailed(message);
    }
  }
}
