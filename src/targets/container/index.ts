/**
 * The container target (GRAPHX_RUNNER=container): each instance is a container of the revision's image
 * (containerInstances.ts) behind the same gateway, rollout, drain and supervision as the local target (InstanceTarget).
 */
import type { ContainerEngine } from '../../containers/engine';
import { controlPlaneDatabaseUrl } from '../../pipeline/deploymentDatabase';
import { InstanceTarget, type InstanceTargetOptions } from '../gateway/instanceTarget';
import { ContainerInstances } from './containerInstances';
import { DeploymentSockets, socketRoot } from './hostSockets';

export interface ContainerTargetOptions extends InstanceTargetOptions {
  engine: ContainerEngine;
}

export class ContainerTarget extends InstanceTarget {
  constructor(override readonly options: ContainerTargetOptions) {
    super(options, (hooks) => {
      const database = new URL(controlPlaneDatabaseUrl(options.config, options.db));
      const sockets = new DeploymentSockets(socketRoot(options.config.dataDir), {
        postgres: { host: database.hostname || '127.0.0.1', port: Number(database.port || 5432) },
        controlPlaneUrl: hooks.controlPlaneUrl,
      });
      return new ContainerInstances({ ...options, sockets, onDeath: hooks.onDeath });
    });
  }
}
