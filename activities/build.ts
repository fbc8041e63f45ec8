/**
 * Build: validate graphx.json, then the install command (default chosen by the lock file) and the build command,
 * each `sh -c` in the application directory with a clean environment: the deployment's secrets, a minimal PATH and
 * HOME = `$dataDir/build-home` (shared, so npm's cache stays warm across builds). None of the control plane's own
 * variables (database URL, secret key, Temporal address) can reach a repository's scripts.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import fs from 'node:fs';
import path from 'node:path';
import {
  DEFAULT_NODE_MAJOR,
  GraphxConfigError,
  missingEnvFileWarning,
  readGraphxConfig,
  type GraphxConfig,
  type Runner,
} from '@graphx/contract/graphxConfig';
import { groupCpuTicks, minimalPath } from '@graphx/kit/os/processes';
import { buildPaths, graphxConfigFile, isImageSource, type RevisionSpec } from '../src/pipeline/revisionSpec';
import {
  buildRevisionImage,
  imageSourceNeedsContainers,
  pullRevisionImage,
  redeployedImage,
  reuseRedeployedImage,
} from './imageBuild';
import { cloneRevision } from './clone';
import type { ActivityDeps } from './deps';
import { dependencyCacheKey, restoreDependencies, saveDependencies } from './support/dependencyCache';
import { readRepoFile } from '../src/security/repoFile';
import { ensurePackageManagerShims, wantsYarnBerry } from './support/packageManagers';
import { runRevisionStep, type SpecLoader } from './support/revisionStep';
import { runCommand } from './support/runCommand';
import type { StepProgress } from './support/progress';
import { watchForStall, type StallWatch } from './support/stallWatch';

/** The install command a lock file implies, or null when the app has none. */
export function defaultInstallCommand(appDir: string): string | null {
  const has = (file: string) => fs.existsSync(path.join(appDir, file));
  if (has('package-lock.json') || has('npm-shrinkwrap.json')) return 'npm ci';
  if (has('yarn.lock')) return wantsYarnBerry(appDir) ? 'yarn install --immutable' : 'yarn install --frozen-lockfile';
  if (has('pnpm-lock.yaml')) return 'pnpm install --frozen-lockfile';
  return null;
}

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

/**
 * Reads graphx.json through the contract's reader, as `runner` builds it: it must exist inside the repository,
 * parse, name at least one graph and have only documented keys; returns its absolute path, the parsed config and the
 * warnings for the build log (documented keys without effect on this runner, a missing env file).
 * @throws ApplicationFailure ConfigInvalid with a sentence naming the file.
 */
export function validateGraphxConfig(
  dataDir: string,
  spec: RevisionSpec,
  runner: Runner,
): { file: string; config: GraphxConfig; warnings: string[] } {
  const file = graphxConfigFile(dataDir, spec);
  if (!file)
    throw ApplicationFailure.nonRetryable(
      `graphx_config_path ${spec.graphxConfigPath} points outside the repository.`,
      'ConfigInvalid',
    );
  const where = `${spec.graphxConfigPath} (commit ${spec.repoCommitSha ?? spec.repoRef})`;
  const repo = buildPaths(dataDir, spec.revisionId).src;
  let read;
  try {
    read = readGraphxConfig(file, { runner, runningNode: process.versions.node.split('.')[0] }, (path) =>
      readRepoFile(repo, path),
    );
  } catch (error) {
    if (!(error instanceof GraphxConfigError)) throw error;
    // The repository guard's message starts with the path it refused; the file is named by `where` instead.
    const reason = error.message.replace(/^cannot be read: \S+ /, '');
    throw ApplicationFailure.nonRetryable(`Configuration file ${where} ${reason}`, 'ConfigInvalid');
  }
  const { config, warnings } = read;
  if (config.env.kind === 'file' && !fs.existsSync(path.resolve(path.dirname(file), config.env.path))) {
    warnings.push(missingEnvFileWarning(config.env.path));
  }
  return { file, config, warnings };
}

/** The `buildApplication` activity. */
export function buildApplicationActivity(deps: ActivityDeps, load: SpecLoader) {
  return ({ revisionId }: { revisionId: string }): Promise<void> =>
    runRevisionStep(deps, load, revisionId, async (spec, progress) => {
      const images = deps.images;
      if (isImageSource(spec)) {
        if (!images) imageSourceNeedsContainers(spec);
        return pullRevisionImage({ ...deps, images }, spec, progress);
      }
      const earlier = images ? await redeployedImage({ ...deps, images }, spec) : null;
      if (images && earlier) return reuseRedeployedImage({ ...deps, images }, spec, earlier, progress);
      const { root, src } = buildPaths(deps.config.dataDir, revisionId);
      if (!fs.existsSync(src)) {
        // Another machine cloned it, or the data dir was wiped: clone the recorded commit again.
        progress.setPhase('clone', 'The clone is missing here; cloning again.');
        await cloneRevision(deps, spec, progress);
      }
      const runner = images ? 'container' : 'process';
      const { file: configFile, config, warnings } = validateGraphxConfig(deps.config.dataDir, spec, runner);
      for (const warning of warnings) progress.line(`warning: ${warning}`, 'warn');
      const appDir = path.dirname(configFile);
      if (images) {
        return buildRevisionImage({ ...deps, images }, spec, { configFile, config }, defaultInstallCommand(appDir), progress, {
          stallLimitSeconds: deps.config.buildStallSeconds,
          nodeMajor: config.nodeMajor ?? DEFAULT_NODE_MAJOR,
        });
      }
      const env = buildEnvironment(deps.config.dataDir, spec);
      const deadline = Date.now() + deps.config.buildTimeoutSeconds * 1000;
      const installCommand = spec.sourceConfig.install_command ?? defaultInstallCommand(appDir);
      // Only the lock file's own install is cached: a custom install command may do anything.
      const cacheRoot = path.join(deps.config.dataDir, 'dependency-cache');
      const cacheKey =
        installCommand && !spec.sourceConfig.install_command ? dependencyCacheKey(appDir, installCommand, spec.tenantId) : null;
      const restored = cacheKey ? await restoreDependencies(cacheRoot, cacheKey, appDir) : false;
      if (restored)
        progress.line(
          `Dependencies unchanged since an earlier build (same lock file): reused them instead of \`${installCommand}\`.`,
        );
      const steps = [
        { phase: 'install', command: restored ? null : installCommand },
        { phase: 'build', command: spec.sourceConfig.build_command ?? null },
      ];
      const pidFile = path.join(root, 'build.pid');
      const stall = watchForStall(progress, {
        limitSeconds: deps.config.buildStallSeconds,
        cpuTicks: () => {
          const pgid = Number(fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8') : 0);
          return pgid > 0 ? groupCpuTicks(pgid) : null;
        },
      });
      try {
        for (const step of steps) {
          if (!step.command) continue;
          await runBuildStep(step.phase, step.command, { appDir, env, deadline, pidFile, stall, progress, deps });
          if (step.phase === 'install' && cacheKey) await saveDependencies(cacheRoot, cacheKey, appDir);
        }
      } finally {
        stall.stop();
      }
      progress.setPhase('done', 'Build finished.');
    });
}

interface BuildStepContext {
  appDir: string;
  env: Record<string, string>;
  deadline: number;
  pidFile: string;
  stall: StallWatch;
  progress: StepProgress;
  deps: ActivityDeps;
}

/** One command of a process-runner build; throws BuildFailed when it fails, times out or stalls. */
async function runBuildStep(phase: string, command: string, context: BuildStepContext): Promise<void> {
  const { appDir, env, deadline, pidFile, stall, progress, deps } = context;
  progress.setPhase(phase, `$ ${command}`);
  const output: string[] = [];
  const result = await runCommand({
    file: '/bin/sh',
    args: ['-c', command],
    cwd: appDir,
    env,
    deadline,
    signal: AbortSignal.any([Context.current().cancellationSignal, stall.signal]),
    pidFile,
    onLine: (line, stream) => {
      output.push(line);
      if (output.length > 50) output.shift();
      progress.line(line, stream === 'stderr' ? 'warn' : 'info');
    },
  });
  if (result.cancelled && stall.message) {
    progress.line(stall.message, 'error');
    throw ApplicationFailure.nonRetryable(progress.redact(stall.message), 'BuildFailed');
  }
  if (result.cancelled) {
    progress.line(`Cancelled: killed \`${command}\` and its processes.`, 'warn');
    await Context.current().cancelled;
  }
  const last =
    progress.redact(
      output
        .filter((line) => line.trim() !== '')
        .slice(-10)
        .join('\n'),
    ) || '(no output)';
  if (result.timedOut) {
    const message = `\`${command}\` did not finish within the ${deps.config.buildTimeoutSeconds} s build time limit: ${last}`;
    progress.line(message, 'error');
    throw ApplicationFailure.nonRetryable(message, 'BuildFailed');
  }
  if (result.exitCode !== 0) {
    const how = result.exitCode === null ? `was killed by ${result.signal}` : `exited with code ${result.exitCode}`;
    const message = `\`${progress.redact(command)}\` ${how}: ${last}`;
    progress.line(message, 'error');
    throw ApplicationFailure.nonRetryable(message, 'BuildFailed');
  }
}
