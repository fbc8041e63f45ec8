/**
 * The local target: revisions run as supervised host processes (not isolated: GRAPHX_RUNNER=process) behind the
 * gateway. Everything but how an instance runs is InstanceTarget's, shared with the container target.
 */
import { RUNTIME_COMMAND, type InstanceCommand } from '../../pipeline/runtimeEnv';
import { InstanceManager } from './instances';
import { InstanceTarget, type InstanceTargetOptions } from './instanceTarget';

export { DeployFailedError, type RolloutProgress } from '../target';
export type { InstanceCommand } from '../../pipeline/runtimeEnv';

export interface LocalTargetOptions extends InstanceTargetOptions {
  /** What an instance runs; defaults to `node bin/graphx.js runtime`. Tests inject a small script. */
  instanceCommand?: InstanceCommand;
}

export class LocalTarget extends InstanceTarget {
  constructor(override readonly options: LocalTargetOptions) {
    super(options, (hooks) => {
      return new InstanceManager({
        config: options.config,
        db: options.db,
        secretBox: options.secretBox,
        instanceCommand: options.instanceCommand ?? RUNTIME_COMMAND,
        controlPlaneUrl: hooks.controlPlaneUrl,
        onDeath: hooks.onDeath,
      });
    });
  }
}
