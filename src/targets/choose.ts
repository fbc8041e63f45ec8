/**
 * The composition roots' choice of target (GRAPHX_RUNNER): `container` opens the engine and fails start-up when it
 * does not answer; `auto` (the default) uses containers when an engine answers and falls back to host processes with
 * a start-up warning that apps and builds are then not isolated; `process` is the local target without asking.
 */
import type { GraphxConfig } from '../config';
import { openContainerEngine, type OpenedEngine } from '../containers';
import type { ContainerEngine } from '../containers/engine';
import type { Db } from '../db/knex';
import { logger } from '@graphx/kit/logger';
import type { SecretBox } from '../security/secretBox';
import { ContainerTarget } from './container';
import { LocalTarget } from './local';

export interface ChosenTarget {
  runner: 'container' | 'process';
  target: ContainerTarget | LocalTarget;
  /** The engine when the runner is `container` (the build side uses it too). */
  engine: ContainerEngine | null;
  /** Stops the engine service this process started (containers keep running). */
  closeEngine: () => Promise<void>;
}

export const NOT_ISOLATED_WARNING =
  'GRAPHX_RUNNER=process: apps and builds run as host processes of this user and are NOT isolated from each other or the control plane';

export async function chooseTarget(config: GraphxConfig, db: Db, secretBox: SecretBox): Promise<ChosenTarget> {
  let opened: OpenedEngine | null = null;
  if (config.runner !== 'process') {
    try {
      opened = await openContainerEngine(config);
    } catch (error) {
      if (config.runner === 'container') throw error;
      logger.warn({ reason: (error as Error).message.split('\n')[0] }, 'no container engine answers');
    }
  }
  if (!opened) {
    logger.warn(NOT_ISOLATED_WARNING);
    return { runner: 'process', target: new LocalTarget({ config, db, secretBox }), engine: null, closeEngine: async () => {} };
  }
  const { engine, close } = opened;
  logger.info('GRAPHX_RUNNER=container: apps run as containers');
  return { runner: 'container', target: new ContainerTarget({ config, db, secretBox, engine }), engine, closeEngine: close };
}
