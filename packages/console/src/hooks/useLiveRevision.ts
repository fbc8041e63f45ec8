/**
 * A revision whose status follows the pipeline: the control plane's long poll (`wait_for_change_from`) answers as
 * soon as the status changes, so the page sees each step without polling every second.
 */
import { useEffect, useState } from 'react';
import { controlPlane, IN_PROGRESS, type Revision } from '../api/controlPlane';

const SETTLE_WAIT_MS = 1000;

export function useLiveRevision(deploymentId: string, revisionId: string, generation = 0) {
  const [revision, setRevision] = useState<Revision | null>(null);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    if (!revisionId) return;
    let live = true;
    const controller = { status: '' };
    const follow = async () => {
      while (live) {
        try {
          const next = await controlPlane.getRevision(deploymentId, revisionId, controller.status || undefined);
          if (!live) return;
          setRevision(next);
          setError(null);
          controller.status = next.status;
          // A failed revision may still be retried (from here, the CLI or Temporal): keep following, more slowly.
          if (!IN_PROGRESS.includes(next.status)) await delay(SETTLE_WAIT_MS);
        } catch (failure) {
          if (!live) return;
          setError(failure as Error);
          await delay(3000);
        }
      }
    };
    void follow();
    return () => {
      live = false;
    };
  }, [deploymentId, revisionId, generation]);
  return { revision, error };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
