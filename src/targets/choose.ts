/**
 * The composition roots' choice of target (GRAPHX_RUNNER), with the container runner's check of this machine:
 * `container` fails start-up with one sentence naming what is missing (a tool, an engine that does not answer, a base
 * image that can neither be pulled nor built); `auto` (the default) uses containers when all of that is there and
 * otherwise falls back to host processes, warning why and that apps and builds are then not isolated; `process` is
 * the local target without asking; `kubernetes` is the cluster's target (KUBECONFIG or in-cluster credentials, the
 * GRAPHX_KUBE_* settings), whose builder builds as the container runner's and pushes to GRAPHX_KUBE_REGISTRY. The
 * runner's builder (src/builders) comes with its target: builds and apps of one runner always agree.
 */
import type { RevisionBuilder } from '../builders/builder';
import { HostBuilder } from '../builders/host/hostBuilder';
import { ImageBuilder } from '../builders/image/imageBuilder';
import { PushingBuilder } from '../builders/pushingBuilder';
import type { GraphxConfig } from '../config';
import { checkContainerTools, openContainerEngine, openRevisionImages, type OpenedEngine } from '../containers';
import type { ContainerEngine } from '../containers/engine';
import type { RevisionImages } from '../containers/revisionImages';
import type { Db } from '../db/knex';
import { logger } from '@graphx/kit/logger';
import type { SecretBox } from '../security/secretBox';
import { ConfigError } from '@graphx/kit/errors';
import { ContainerTarget } from './container';
import { KubernetesTarget } from './kubernetes';
import { SkopeoImagePusher } from './kubernetes/imagePusher';
import { ProcessTarget } from './process';

/** What every runner gives its composition root, whatever runs the apps. */
interface ChosenParts {
  /** The engine when the runner is `container`, or `kubernetes` on a process that builds (the build side uses it). */
  engine: ContainerEngine | null;
  /** Its Docker Engine API socket (null without an engine). */
  engineSocket: string | null;
  /**
   * The runner's builder: the image builder (base and runtime image ready) when the runner is `container` and it was
   * asked for, else the host builder; on Kubernetes the pushing builder around the image builder.
   */
  builder: RevisionBuilder;
  /** Stops the engine service this process started (containers keep running) and unmounts what it left. */
  closeEngine: () => Promise<void>;
}

/**
 * The container and process runners run apps on this machine behind graphx's gateway; the Kubernetes runner has no
 * gateway (each deployment's URL is its own route on the cluster) and its apps outlive graphx.
 */
export type ChosenTarget = ChosenParts &
  (
    | { runner: 'container'; target: ContainerTarget }
    | { runner: 'process'; target: ProcessTarget }
    | { runner: 'kubernetes'; target: KubernetesTarget }
  );

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
  if (config.runner === 'kubernetes') return openKubernetesRunner(config, db, secretBox, options);
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

/**
 * The Kubernetes runner. A process that builds (its worker polls the build queue) needs the container engine and a
 * registry, and fails start-up with one sentence without either; one that does not (the API alone, a control-only
 * worker in the cluster) needs neither: its builder only reuses images already pushed.
 */
async function openKubernetesRunner(
  config: GraphxConfig,
  db: Db,
  secretBox: SecretBox,
  options: ChooseTargetOptions,
): Promise<ChosenTarget> {
  const settings = config.kube;
  if (!settings) throw new ConfigError('GRAPHX_RUNNER=kubernetes without its settings (loadConfig reads them).');
  const repository = settings.registry.repository;
  const builds = Boolean(options.builds) && config.workerQueues.includes('build');
  if (builds && !repository) {
    throw new ConfigError(
      'GRAPHX_KUBE_REGISTRY must name the registry revision images are pushed to (host[:port]/path) on a worker that builds.',
    );
  }
  const target = KubernetesTarget.open({ config, db, secretBox, settings });
  let opened: OpenedEngine | null = null;
  let inner: ImageBuilder | null = null;
  if (builds) {
    try {
      checkContainerTools(config);
      opened = await openContainerEngine(config, { takeOver: options.takeOverEngine });
      inner = new ImageBuilder({
        config,
        db,
        images: await openRevisionImages(opened.engine, config, (line) => logger.info(line)),
      });
    } catch (error) {
      target.api.close();
      await opened?.close();
      throw error;
    }
  }
  const pusher = new SkopeoImagePusher({
    repository: repository ?? 'registry.invalid/graphx',
    authFile: settings.registry.authFile,
    tlsVerify: settings.registry.tlsVerify,
    storageEnv: opened?.storageEnv ?? {},
  });
  logger.info(
    { server: target.api.server, namespace: settings.defaultNamespace, registry: repository },
    'GRAPHX_RUNNER=kubernetes: apps run on the cluster',
  );
  return {
    runner: 'kubernetes',
    target,
    engine: opened?.engine ?? null,
    engineSocket: opened?.socketPath ?? null,
    builder: new PushingBuilder({ inner, pusher, repository: repository ?? 'registry.invalid/graphx', db }),
    closeEngine: opened ? opened.close : async () => {},
  };
}
