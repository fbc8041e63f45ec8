/** Every migration, by its timestamped name. Add new ones here. */
import type { Knex } from 'knex';
import * as coreSchema from './20261123000000_core_schema';
import * as authService from './20261123000100_auth_service';
import * as localInstances from './20261124000300_local_instances';
import * as authAttemptOutcome from './20261124000500_auth_attempt_outcome';
import * as deploymentRouteKey from './20261124000600_deployment_route_key';
import * as runLatencyBigint from './20261124001000_run_latency_bigint';
import * as revisionImage from './20261124001200_revision_image';
import * as pushWebhooks from './20261125000100_push_webhooks';
import * as customUrlHost from './20261125000200_custom_url_host';
import * as instanceOutputColumns from './20261125000300_instance_output_columns';
import * as outboxTaskQueue from './20261128000100_outbox_task_queue';

export const migrations: Record<string, Knex.Migration> = {
  '20261123000000_core_schema': coreSchema,
  '20261123000100_auth_service': authService,
  '20261124000300_local_instances': localInstances,
  '20261124000500_auth_attempt_outcome': authAttemptOutcome,
  '20261124000600_deployment_route_key': deploymentRouteKey,
  '20261124001000_run_latency_bigint': runLatencyBigint,
  '20261124001200_revision_image': revisionImage,
  '20261125000100_push_webhooks': pushWebhooks,
  '20261125000200_custom_url_host': customUrlHost,
  '20261125000300_instance_output_columns': instanceOutputColumns,
  '20261128000100_outbox_task_queue': outboxTaskQueue,
};
