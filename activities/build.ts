/**
 * Build: validate graphx.json as the chosen builder's runner reads it, then hand the app to the builder (src/builders:
 * host commands for the process runner, an image for the container runner). The builder's domain errors become
 * non-retryable failures of the same type; its cancellation, the activity's.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import fs from 'node:fs';
import path from 'node:path';
import {
  GraphxConfigError,
  missingEnvFileWarning,
  readGraphxConfig,
  type GraphxConfig,
  type Runner,
} from '@graphx/contract/graphxConfig';
import { buildPaths, graphxConfigFile, isImageSource, type RevisionSpec } from '../src/pipeline/revisionSpec';
import { BuildCancelled, BuildFailed, type BuildContext } from '../src/builders/builder';
import { PipelineState } from '../src/db/repositories/pipelineState';
import { cloneRevision } from './clone';
import type { ActivityDeps } from './deps';
import { readRepoFile } from '../src/security/repoFile';
import { runRevisionStep, type SpecLoader } from './support/revisionStep';
import type { StepProgress } from './support/progress';

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

/** What a builder reports through, stops on and records with, for this activity. */
export function buildContext(deps: ActivityDeps, spec: RevisionSpec, progress: StepProgress): BuildContext {
  return {
    progress,
    cancelled: Context.current().cancellationSignal,
    recordImage: async (image) => {
      await new PipelineState(deps.db).recordImage(spec.revisionId, image);
      progress.setImage(image);
    },
  };
}

/** Runs a builder call, turning its domain errors into the activity's failures. */
export async function asActivityFailure<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof BuildFailed) throw ApplicationFailure.nonRetryable(error.message, 'BuildFailed');
    if (error instanceof BuildCancelled) await Context.current().cancelled;
    throw error;
  }
}

/** The `buildApplication` activity. */
export function buildApplicationActivity(deps: ActivityDeps, load: SpecLoader) {
  return ({ revisionId }: { revisionId: string }): Promise<void> =>
    runRevisionStep(deps, load, revisionId, async (spec, progress) => {
      const { builder } = deps;
      const context = buildContext(deps, spec, progress);
      if (isImageSource(spec)) return asActivityFailure(builder.pullImage(spec, context));
      const earlier = await builder.earlierBuild(spec);
      if (earlier) return asActivityFailure(builder.reuseEarlier(spec, earlier, context));
      if (!fs.existsSync(buildPaths(deps.config.dataDir, revisionId).src)) {
        // Another machine cloned it, or the data dir was wiped: clone the recorded commit again.
        progress.setPhase('clone', 'The clone is missing here; cloning again.');
        await cloneRevision(deps, spec, progress);
      }
      const { file: configFile, config, warnings } = validateGraphxConfig(deps.config.dataDir, spec, builder.runner);
      for (const warning of warnings) progress.line(`warning: ${warning}`, 'warn');
      return asActivityFailure(builder.build(spec, { configFile, config }, context));
    });
}
