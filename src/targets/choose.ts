/**
 * The composition roots' choice of target (GRAPHX_RUNNER), with the container runner's check of this machine:
 * `container` fails start-up with one sentence naming what is missing (a tool, an engine that does not answer, a base
 * image that can neither be pulled nor built); `auto` (the default) uses containers when all of that is there and
 * otherwise falls back to host processes, warning why and that apps and builds are then not isolated; `process` is
 * the local target without asking. The runner's builder (src/builders) comes with its target: builds and apps of one
 * runner always agree.
 */
import type { RevisionBuilder } from '../builders/builder';
import { HostBuilder } from '../builders/host/hostBuilder';
import { ImageBuilder } from '../builders/image/imageBuilder';
import type { GraphxConfig } from '../config';
import { checkContainerTools, openContainerEngine, openRevisionImages, type OpenedEngine } from '../containers';
import type { ContainerEngine } from '../containers/engine';
import type { RevisionImages } from '../containers/revisionImages';
import type { Db } from '../db/knex';
import { logger } from '@graphx/kit/logger';
import type { SecretBox } from '../security/secretBox';
import { ContainerTarget } from './container';
import { ProcessTarget } from './process';

export interface ChosenTarget {
  runner: 'container' | 'process';
  target: ContainerTarget | ProcessTarget;
  /** The engine when the runner is `container` (the build side uses it too). */
  engine: ContainerEngine | null;
  /** Its Docker Engine API socket (null with the process runner). */
  engineSocket: string | null;
  /**
   * The runner's builder: the image builder (base and runtime image ready) when the runner is `container` and it was
   * asked for, else the host builder.
   */
  builder: RevisionBuilder;
  /** Stops the engine service this process started (containers keep running) and unmounts what it left. */
  closeEngine: () => Promise<void>;
}

export interface ChooseTargetOptions {
  /** A worker that builds: prepare the base and runtime images, whose failure counts as the runner's. */
  builds?: boolean;
  /** Stop a podman service found running on this data dir too when closing (graphx start owns its engine). */
  takeOverEngine?: boolean;
}

export const NOT_ISOLATED_WARNING =
  'GRAPHX_RUNNER=process: apps and builds run as host processes of this user and are NOT isolated from each other or the control plane';

export async function chooseTarget(
  config: GraphxConfig,
  db: Db,
  secretBox: SecretBox,
  options: ChooseTargetOptions = {},
): Promise<ChosenTarget> {
  if (config.runner !== 'process') {
    try {
      return await openContainerRunner(config, db, secretBox, options);
    } catch (error) {
      if (config.runner === 'container') throw error;
      logger.warn({ reason: (error as Error).message.split('\n')[0] }, 'the container runner is not available; using processes');
    }
  }
  logger.warn(NOT_ISOLATED_WARNING);
  return {
    runner: 'process',
    target: new ProcessTarget({ config, db, secretBox }),
    engine: null,
    engineSocket: null,
    builder: new HostBuilder(config),
    closeEngine: async () => {},
  };
}

async function openContainerRunner(
  config: GraphxConfig,
  db: Db,
  secretBox: SecretBox,
  options: ChooseTargetOptions,
): Promise<ChosenTarget> {
  checkContainerTools(config);
  const opened: OpenedEngine = await openContainerEngine(config, { takeOver: options.takeOverEngine });
  let images: RevisionImages | undefined;
  try {
    if (options.builds) images = await openRevisionImages(opened.engine, config, (line) => logger.info(line));
  } catch (error) {
    await opened.close();
    throw error;
  }
  logger.info('GRAPHX_RUNNER=container: apps run as containers');
  return {
    runner: 'container',
    target: new ContainerTarget({ config, db, secretBox, engine: opened.engine }),
    engine: opened.engine,
    engineSocket: opened.socketPath,
    builder: images ? new ImageBuilder({ config, db, images }) : new HostBuilder(config),
    closeEngine: opened.close,
  };
}
