/**
 * `build_on_push`: a verified push of a code-host integration creates a revision at the pushed commit for every
 * deployment of the integration's tenants that builds on push, follows the pushed ref and clones the pushed
 * repository. The delivery is claimed in the same transaction, so a redelivered event creates nothing new.
 */
import { refFollowed, repositoryKey, type PushEvent } from '../auth/pushWebhook';
import { DeploymentRepository } from '../db/repositories/deployments';
import { PushDeliveryRepository } from '../db/repositories/pushDeliveries';
import { RevisionRepository } from '../db/repositories/revisions';
import type { DeploymentService, DeploymentServiceDeps } from './service';

export interface PushDelivery {
  providerPk: string;
  deliveryId: string;
  /** Tenants with an integration of this provider for the push's installation. */
  tenantIds: string[];
  push: PushEvent;
}

export interface PushOutcome {
  /** True when this delivery was handled before: nothing was created now. */
  duplicate: boolean;
  revisions: Array<{ deployment_id: string; revision_id: string }>;
}

export async function createPushRevisions(
  deps: DeploymentServiceDeps,
  service: DeploymentService,
  delivery: PushDelivery,
): Promise<PushOutcome> {
  const pushed = new Set(delivery.push.repositoryUrls.map(repositoryKey));
  const outcome = await deps.db.transaction(async (trx): Promise<PushOutcome> => {
    const deliveries = new PushDeliveryRepository(trx);
    if (!(await deliveries.claim(delivery.providerPk, delivery.deliveryId))) return { duplicate: true, revisions: [] };
    const revisions: PushOutcome['revisions'] = [];
    for (const deployment of await new DeploymentRepository(trx).buildingOnPush(delivery.tenantIds)) {
      const repoUrl = deployment.sourceConfig.repo_url;
      if (!repoUrl || !pushed.has(repositoryKey(repoUrl))) continue;
      const latest = deployment.latestRevisionId
        ? await new RevisionRepository(trx).find(deployment.id, deployment.latestRevisionId)
        : null;
      const revisionConfig = { ...(latest?.sourceRevisionConfig ?? {}) };
      if (!refFollowed(revisionConfig.repo_ref ?? 'main', delivery.push.ref)) continue;
      delete revisionConfig.repo_commit_sha;
      const secrets = latest ? service.decryptSecrets(latest) : [];
      const revision = await service.addRevision(trx, deployment, deployment.sourceConfig, revisionConfig, secrets, {
        commitSha: delivery.push.commitSha,
      });
      revisions.push({ deployment_id: deployment.id, revision_id: revision.id });
    }
    await deliveries.setRevisionsCreated(delivery.providerPk, delivery.deliveryId, revisions.length);
    return { duplicate: false, revisions };
  });
  if (outcome.revisions.length > 0) service.pokeOutbox();
  return outcome;
}
