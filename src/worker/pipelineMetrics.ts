/** The worker's own series: how long each pipeline step's activity takes, and how it ends. */
import { Histogram, type Registry } from 'prom-client';
import type { PipelineActivities } from '../../activities/types';
import type { PipelineStep } from '@graphx/contract/statuses';

/** Builds take minutes: buckets from 100 ms to 30 min. */
const STEP_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800];

const STEP_OF_ACTIVITY: Partial<Record<keyof PipelineActivities, PipelineStep>> = {
  cloneRepository: 'clone',
  buildApplication: 'build',
  provisionDatabase: 'database',
  rolloutRevision: 'rollout',
};

/**
 * Wraps the step activities so each attempt is timed into `graphx_pipeline_step_duration_seconds{step, outcome}`
 * (outcome `success` or `failure`; a retried step records each attempt).
 */
export function timePipelineSteps(activities: PipelineActivities, registry: Registry): PipelineActivities {
  const duration = new Histogram({
    name: 'graphx_pipeline_step_duration_seconds',
    help: 'Duration of one attempt of a pipeline step activity (clone, build, database, rollout), by outcome.',
    labelNames: ['step', 'outcome'],
    buckets: STEP_BUCKETS,
    registers: [registry],
  });
  const timed = { ...activities } as Record<string, (...args: never[]) => Promise<unknown>>;
  for (const [name, step] of Object.entries(STEP_OF_ACTIVITY)) {
    const activity = timed[name];
    if (!activity || !step) continue;
    timed[name] = async (...args: never[]) => {
      const end = duration.startTimer({ step });
      try {
        const result = await activity(...args);
        end({ outcome: 'success' });
        return result;
      } catch (error) {
        end({ outcome: 'failure' });
        throw error;
      }
    };
  }
  return timed as unknown as PipelineActivities;
}
