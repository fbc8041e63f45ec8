/**
 * Clone: real `git` into `$dataDir/builds/<revision_id>/src` at `repo_ref` (branch, tag, full or short sha).
 * Each attempt clones into a fresh temporary directory and renames it into place, so a worker killed mid-clone
 * leaves nothing a re-run trips over. Once a revision has a recorded commit, a re-clone fetches that commit, not the
 * ref's newer tip. An integration's token reaches git only through the environment (never a URL, file or log).
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gitConfigEnv, gitCredentialHeader } from '../src/auth/gitCredentialEnv';
import { getIntegrationCloneToken } from '../src/auth/integrationCredentials';
import { PipelineState } from '../src/db/repositories/pipelineState';
import { InputError } from '@graphx/kit/errors';
import { minimalPath } from '@graphx/kit/os/processes';
import { buildPaths, isImageSource, type RevisionSpec } from '../src/pipeline/revisionSpec';
import type { ActivityDeps } from './deps';
import { cloneDestinationConfig } from './support/cloneDestination';
import type { StepProgress } from './support/progress';
import { runRevisionStep, type SpecLoader } from './support/revisionStep';
import { runCommand } from '@graphx/kit/os/runCommand';

const GIT_TIMEOUT_MS = 10 * 60_000;
const NOT_FOUND = /repository not found|does not appear to be a git repository|not found|does not exist|404/i;
const TRANSIENT =
  /could not resolve host|connection timed out|operation timed out|connection reset|early eof|rpc failed|temporary failure|returned error: 5\d\d/i;
const AUTH = /authentication failed|could not read username|permission denied|returned error: 40[13]/i;

/** The URL as users may see it: any credentials in it masked. */
export function displayUrl(repoUrl: string): string {
  try {
    const url = new URL(repoUrl);
    if (url.username || url.password) {
      url.username = '***';
      url.password = '';
    }
    return url.toString();
  } catch {
    return repoUrl;
  }
}

/** https always; file:// and http://127.0.0.1 or localhost only when allowed (embedded stack, tests). */
export function repoUrlAllowed(repoUrl: string, allowFileRepos: boolean): boolean {
  let url: URL;
  try {
    url = new URL(repoUrl);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  if (!allowFileRepos) return false;
  if (url.protocol === 'file:') return true;
  return url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === 'localhost');
}

/**
 * Clones the revision's repository into its build dir and returns the commit checked out.
 * @throws ApplicationFailure RepoNotFound / CloneFailed (non-retryable) naming the repository and ref.
 */
export async function cloneRevision(deps: ActivityDeps, spec: RevisionSpec, progress: StepProgress): Promise<string> {
  const repoUrl = spec.sourceConfig.repo_url;
  if (!repoUrl) throw ApplicationFailure.nonRetryable('The revision has no source_config.repo_url to clone.', 'CloneFailed');
  const shown = displayUrl(repoUrl);
  const ref = spec.repoCommitSha ?? spec.repoRef;
  // The API refuses such refs; a revision stored before that rule must not reach git as an option either.
  if (ref.startsWith('-')) throw ApplicationFailure.nonRetryable(`Ref ${ref} is not a git ref.`, 'CloneFailed');
  if (!repoUrlAllowed(repoUrl, deps.config.allowFileRepos)) {
    throw ApplicationFailure.nonRetryable(`Repository URL ${shown} is not allowed: use an https:// URL.`, 'CloneFailed');
  }
  const env = await gitEnvironment(deps, spec, progress, await cloneDestinationConfig(repoUrl, shown, deps.config));
  const { root, src } = buildPaths(deps.config.dataDir, spec.revisionId);
  const work = freshWorkDir(root);
  const git = gitIn(work, env, progress);

  progress.setPhase('clone', `Cloning ${shown} at ${ref}`);
  await git(['init', '-q']);
  await git(['remote', 'add', 'origin', repoUrl], true);
  const sha = await fetchCommit(git, shown, ref);
  const checkout = await git(['-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', sha]);
  if (!checkout.ok) {
    throw ApplicationFailure.nonRetryable(
      `git checkout of ${ref} (${sha}) from ${shown} failed: ${checkout.output}`,
      'CloneFailed',
    );
  }
  fs.rmSync(src, { recursive: true, force: true });
  fs.renameSync(work, src);
  progress.line(`Checked out ${sha}`);
  return sha;
}

/**
 * A new directory to clone into beside the revision's `src` (renamed to it once the checkout is complete, so a
 * half-done clone is never built); what earlier attempts left is removed first.
 */
function freshWorkDir(root: string): string {
  fs.mkdirSync(root, { recursive: true });
  for (const entry of fs.readdirSync(root)) {
    if (entry.startsWith('src.tmp-')) fs.rmSync(path.join(root, entry), { recursive: true, force: true });
  }
  const work = path.join(root, `src.tmp-${crypto.randomBytes(4).toString('hex')}`);
  fs.mkdirSync(work);
  return work;
}

/** One git command's outcome: its last output lines, secrets redacted. */
type GitRun = (args: string[], quiet?: boolean) => Promise<{ ok: boolean; output: string }>;

/**
 * Runs git in `work` with `env`, bounded by GIT_TIMEOUT_MS and the activity's cancellation; each command and its
 * output go to the revision's log unless `quiet`.
 */
function gitIn(work: string, env: Record<string, string>, progress: StepProgress): GitRun {
  return async (args, quiet = false) => {
    const output: string[] = [];
    if (!quiet) progress.line(`$ git ${args.join(' ')}`);
    const result = await runCommand({
      file: 'git',
      args,
      cwd: work,
      env,
      deadline: Date.now() + GIT_TIMEOUT_MS,
      signal: Context.current().cancellationSignal,
      onLine: (line) => {
        output.push(line);
        if (!quiet) progress.line(line);
      },
    });
    if (result.cancelled) await Context.current().cancelled;
    return {
      ok: result.exitCode === 0,
      output: progress.redact(
        output
          .filter((l) => l.trim())
          .slice(-10)
          .join('\n'),
      ),
    };
  };
}

/**
 * Fetches `ref` into the repository `git` runs in and returns its commit: one shallow fetch when the server serves
 * the ref by name, else the whole history to resolve it (a short sha, or a server refusing unadvertised objects).
 * @throws ApplicationFailure CloneFailed when the ref names no commit; see classifyFetchFailure for the rest.
 */
async function fetchCommit(git: GitRun, shown: string, ref: string): Promise<string> {
  let sha: string | null = null;
  const shallow = await git(['fetch', '--depth', '1', '--no-tags', 'origin', '--', ref]);
  if (shallow.ok) {
    sha = (await git(['rev-parse', 'FETCH_HEAD^{commit}'], true)).output.trim();
  } else {
    classifyFetchFailure(shallow.output, shown, ref);
    const full = await git(['fetch', '--no-tags', 'origin', '+refs/heads/*:refs/remotes/origin/*', '+refs/tags/*:refs/tags/*']);
    if (!full.ok) classifyFetchFailure(full.output, shown, ref, true);
    for (const candidate of [`refs/remotes/origin/${ref}`, `refs/tags/${ref}`, ref]) {
      const resolved = await git(['rev-parse', '--verify', '--quiet', `${candidate}^{commit}`], true);
      if (resolved.ok) {
        sha = resolved.output.trim();
        break;
      }
    }
  }
  if (!sha || !/^[0-9a-f]{40,64}$/.test(sha)) {
    throw ApplicationFailure.nonRetryable(`Ref ${ref} was not found in repository ${shown}.`, 'CloneFailed');
  }
  return sha;
}

/** Throws the right failure for a fetch error; returns when the ref alone was missing (the caller tries harder). */
function classifyFetchFailure(output: string, shown: string, ref: string, final = false): void {
  if (/couldn't find remote ref|not our ref|no such remote ref|unadvertised object/i.test(output) && !final) return;
  if (TRANSIENT.test(output)) throw new Error(`Fetching ${shown} at ${ref} failed (will retry): ${output}`);
  if (AUTH.test(output)) {
    throw ApplicationFailure.nonRetryable(
      `Access to repository ${shown} was denied while fetching ${ref}: ${output}`,
      'RepoNotFound',
    );
  }
  if (NOT_FOUND.test(output) && !/remote ref/i.test(output)) {
    throw ApplicationFailure.nonRetryable(`Repository ${shown} was not found (ref ${ref}): ${output}`, 'RepoNotFound');
  }
  if (!final) return;
  throw ApplicationFailure.nonRetryable(`git fetch of ${shown} at ${ref} failed: ${output}`, 'CloneFailed');
}

/**
 * git's environment: no system or user config, no prompts, only the allowed protocols, the destination pinned, the
 * token as a header.
 */
async function gitEnvironment(
  deps: ActivityDeps,
  spec: RevisionSpec,
  progress: StepProgress,
  destination: Array<[string, string]>,
): Promise<Record<string, string>> {
  const home = path.join(deps.config.dataDir, 'build-home');
  fs.mkdirSync(home, { recursive: true });
  const env: Record<string, string> = {
    PATH: minimalPath(),
    HOME: home,
    LC_ALL: 'C', // English messages: the failure classification reads them.
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: deps.config.allowFileRepos ? 'https:http:file' : 'https',
  };
  const integrationId = spec.sourceConfig.integration_id;
  if (integrationId) {
    let token: string;
    try {
      token = await getIntegrationCloneToken(
        { db: deps.db, secretBox: deps.secretBox, config: deps.config },
        spec.tenantId,
        integrationId,
      );
    } catch (error) {
      if ((error as Error).name === 'NotFoundError') {
        throw ApplicationFailure.nonRetryable(`Integration ${integrationId} was not found for this organization.`, 'CloneFailed');
      }
      // A provider that refuses the refresh, or a token that cannot be refreshed, needs a person: authorize again.
      // Only an unreachable token endpoint is worth retrying.
      const kind = (error as { kind?: string }).kind;
      if (error instanceof InputError && kind !== 'unreachable') {
        throw ApplicationFailure.nonRetryable(
          `The token of integration ${integrationId} could not be used: ${(error as Error).message}`,
          'CloneFailed',
        );
      }
      throw error;
    }
    const header = gitCredentialHeader(token);
    progress.addSecret(token);
    progress.addSecret(header);
    return { ...env, ...gitConfigEnv([...destination, ['http.extraHeader', header]]) };
  }
  return { ...env, ...gitConfigEnv(destination) };
}

/** The `cloneRepository` activity. */
export function cloneRepositoryActivity(deps: ActivityDeps, load: SpecLoader) {
  return ({ revisionId }: { revisionId: string }): Promise<{ repoCommitSha: string | null }> =>
    runRevisionStep(deps, load, revisionId, async (spec, progress) => {
      if (isImageSource(spec)) {
        progress.setPhase('clone', `Nothing to clone: the revision runs image ${spec.imageUri ?? '(none)'}.`);
        return { repoCommitSha: null };
      }
      const earlier = await deps.builder.earlierBuild(spec);
      if (earlier) {
        progress.setPhase(
          'clone',
          `Nothing to clone: this redeploy of revision ${earlier.revisionId} runs its image ${earlier.ref}, built from commit ${earlier.repoCommitSha}.`,
        );
        await new PipelineState(deps.db).recordCommitSha(revisionId, earlier.repoCommitSha);
        return { repoCommitSha: earlier.repoCommitSha };
      }
      const sha = await cloneRevision(deps, spec, progress);
      await new PipelineState(deps.db).recordCommitSha(revisionId, sha);
      return { repoCommitSha: sha };
    });
}
