/**
 * The local target: revisions run as supervised processes on this machine behind one gateway
 * (`http://127.0.0.1:<gateway port>/<deployment-name>`).
 */
import type { GraphxConfig } from '../../config';
import type { Db } from '../../db/knex';
import type { SecretBox } from '../../security/secretBox';

export interface LocalTargetOptions {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
}

export class LocalTarget {
  constructor(readonly options: LocalTargetOptions) {}

  /** Public URL of a deployment behind the gateway. */
  deploymentUrl(deploymentName: string): string {
    return `http://127.0.0.1:${this.options.config.gatewayPort}/${deploymentName}`;
  }

  /** Starts the gateway listening; resolves with a function that closes it. */
  async startGateway(): Promise<() => Promise<void>> {
    return async () => {};
  }

  /** After a restart of the stack: brings back the instances of every deployment with an active revision. */
  async restoreActiveInstances(): Promise<void> {}

  /** Stops every instance this process supervises. */
  async stopAll(): Promise<void> {}
}
