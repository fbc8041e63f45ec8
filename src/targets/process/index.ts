/**
 * The process target: revisions run as supervised host processes (not isolated: GRAPHX_RUNNER=process) behind the
 * gateway. Everything but how an instance runs is InstanceTarget's, shared with the container target.
 */
import { RUNTIME_COMMAND, type InstanceCommand } from '../../pipeline/runtimeEnv';
import { ProcessInstances } from './processInstances';
import { InstanceTarget, type InstanceTargetOptions } from '../gateway/instanceTarget';

export { DeployFailedError, type RolloutProgress } from '../target';
export type { InstanceCommand } from '../../pipeline/runtimeEnv';

export interface ProcessTargetOptions extends InstanceTargetOptions {
  /** What an instance runs; defaults to `node bin/graphx.js runtime`. Tests inject a small script. */
  instanceCommand?: InstanceCommand;
}

export class ProcessTarget extends InstanceTarget {
  constructor(override readonly options: ProcessTargetOptions) {
    super(options, (hooks) => {
      return new ProcessInstances({
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
