/**
 * The prologue and epilogue every revision step shares: load the revision's spec (from the database, never from
 * the workflow history), open its progress (heartbeats, revision log lines, secrets masked), and always flush and
 * close it at the end, whatever the step threw.
 */
import type { RevisionSpec } from '../../src/pipeline/revisionSpec';
import type { ActivityDeps } from '../deps';
import { StepProgress } from './progress';

/** Loads a revision's spec; turns a missing revision into a non-retryable failure (see activities/index.ts). */
export type SpecLoader = (revisionId: string) => Promise<RevisionSpec>;

/** Runs `body` with the revision's spec and an open progress; closes the progress afterwards. */
export async function runRevisionStep<T>(
  deps: ActivityDeps,
  load: SpecLoader,
  revisionId: string,
  body: (spec: RevisionSpec, progress: StepProgress) => Promise<T>,
): Promise<T> {
  const spec = await load(revisionId);
  const progress = new StepProgress(
    deps.db,
    revisionId,
    spec.secrets.map((s) => s.value),
  );
  try {
    return await body(spec, progress);
  } finally {
    await progress.close();
  }
}
