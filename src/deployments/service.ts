/**
 * Deployments and revisions as the API sees them. Every change that starts pipeline work writes an outbox row in
 * the same transaction (see src/pipeline/outbox.ts), so a crash after the commit loses nothing.
 */
import crypto from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { GraphxConfig } from '../config';
import type { Db, DbOrTx } from '../db/knex';
import { DeploymentRepository, type DeploymentRecord } from '../db/repositories/deployments';
import { RevisionRepository, type RevisionRecord } from '../db/repositories/revisions';
import { TracingRepository } from '../db/repositories/tracing';
import { ConflictError, deploymentNotFound, InputError, revisionNotFound } from '@graphx/kit/errors';
import { writeOutboxMessage } from '../pipeline/outbox';
import type { OutboxMessage } from '../pipeline/deploymentWorkflowClient';
import type { SecretBox } from '../security/secretBox';
import type { AppLogSource } from '../targets/target';
import {
  assertSecretsAllowed,
  assertSourceAllowed,
  checkCustomUrl,
  checkSourceConfiguration,
  mergeSecrets,
  patchedSourceConfig,
  patchNeedsRevision,
} from './rules';
import type { CreateDeploymentRequest, PatchDeploymentRequest, Secret, SourceConfig, SourceRevisionConfig } from './schemas';
import { deploymentView, effectiveStatusKeptUntil } from './views';
import { checkResourceSpec, runnerPolicyOf, type RunnerPolicy } from './resourceSpecPolicy';
import { BoundedMap } from '@graphx/kit/boundedMap';

export interface DeploymentServiceDeps {
  config: GraphxConfig;
  db: Db;
  secretBox: SecretBox;
  temporal: Client;
  /** Where revisions run, for the resource_spec checks (default: from GRAPHX_RUNNER). */
  resourcePolicy?: RunnerPolicy;
  /** Wakes the outbox relay after a commit that wrote outbox rows (ApiDeps.pokeOutbox). */
  pokeOutbox?: () => void;
  /** Where app logs are read (ApiDeps.appLogSource). */
  appLogSource?: AppLogSource;
}

const PG_UNIQUE_VIOLATION = '23505';
/** The partial unique index on the gateway path of live deployments (migration deployment_route_key). */
const ROUTE_KEY_INDEX = 'deployments_route_key_live';
/** The partial unique index on the host of live deployments' custom_url (migration custom_url_host). */
const CUSTOM_URL_INDEX = 'deployments_custom_url_host_live';

function customUrlTaken(url: string | null | undefined): ConflictError {
  return new ConflictError(`custom_url ${url} names a host another deployment is reached at.`);
}

/** Secret names by ciphertext (see `secretsForView`); values are never kept. Bounded, oldest dropped first. */
const SECRET_NAMES_CACHE_ENTRIES = 10_000;
const secretNamesByCiphertext = new BoundedMap<string, Secret[]>(SECRET_NAMES_CACHE_ENTRIES);

export class DeploymentService {
  /** GET deployment's serialized views by deployment id (getJson); bounded, oldest dropped. */
  private readonly serializedViews = new BoundedMap<string, { version: string; json: string; until: number }>(10_000);

  constructor(private readonly deps: DeploymentServiceDeps) {}

  async create(tenantId: string, request: CreateDeploymentRequest): Promise<Record<string, unknown>> {
    const { config, db } = this.deps;
    assertSourceAllowed(config, request.source);
    const revisionConfig = checkSourceConfiguration(
      config,
      request.source,
      request.source_config,
      request.source_revision_config,
    );
    assertSecretsAllowed(request.secrets);
    // custom_url is an extra host the gateway routes to the deployment (unique among live deployments: an index).
    const sourceConfig: SourceConfig = {
      ...request.source_config,
      custom_url: checkCustomUrl(config, request.source_config.custom_url),
    };
    const warnings = checkResourceSpec(sourceConfig, this.resourcePolicy());

    const deploymentId = crypto.randomUUID();
    // Two tenants creating the same name at once can both see the gateway path free; the loser of the unique index
    // retries once and then gets the suffixed path instead of a 409 about a name it does not have.
    for (let attempt = 1; ; attempt += 1) {
      try {
        await db.transaction((trx) =>
          this.insertDeployment(trx, tenantId, deploymentId, { request, sourceConfig, revisionConfig, warnings }),
        );
        break;
      } catch (error) {
        const { code, constraint } = error as { code?: string; constraint?: string };
        if (code === PG_UNIQUE_VIOLATION && constraint === ROUTE_KEY_INDEX && attempt < 2) continue;
        if (code === PG_UNIQUE_VIOLATION && constraint === CUSTOM_URL_INDEX) throw customUrlTaken(sourceConfig.custom_url);
        if (code === PG_UNIQUE_VIOLATION) {
          throw new ConflictError(`A deployment or tracing project named '${request.name}' already exists.`);
        }
        throw error;
      }
    }
    this.pokeOutbox();
    return { ...(await this.get(tenantId, deploymentId)), warnings };
  }

  /**
   * The deployment's rows, in the caller's transaction: its tracing project (same name), the deployment on a free
   * gateway path, and its first revision with the outbox row that starts the pipeline.
   */
  private async insertDeployment(
    trx: DbOrTx,
    tenantId: string,
    deploymentId: string,
    checked: {
      request: CreateDeploymentRequest;
      sourceConfig: SourceConfig;
      revisionConfig: SourceRevisionConfig;
      warnings: string[];
    },
  ): Promise<void> {
    const { request, sourceConfig, revisionConfig, warnings } = checked;
    if (sourceConfig.integration_id) await assertIntegrationExists(trx, tenantId, sourceConfig.integration_id);
    const deployments = new DeploymentRepository(trx);
    if (await deployments.existsByName(tenantId, request.name)) {
      throw new ConflictError(`A deployment named '${request.name}' already exists.`);
    }
    const tracingProjectId = await new TracingRepository(trx).createForDeployment(tenantId, request.name, deploymentId);
    await deployments.insert({
      id: deploymentId,
      tenantId,
      name: request.name,
      source: request.source,
      sourceConfig,
      imageVersion: request.image_version ?? null,
      tracingProjectId,
      routeKey: await deployments.freeRouteKey(request.name, deploymentId),
    });
    await this.addRevision(
      trx,
      { id: deploymentId, tenantId, name: request.name, source: request.source },
      sourceConfig,
      revisionConfig,
      request.secrets,
      { warnings },
    );
  }

  /** What the resource_spec checks know of where revisions run. */
  private resourcePolicy(): RunnerPolicy {
    return this.deps.resourcePolicy ?? runnerPolicyOf(this.deps.config);
  }

  async get(tenantId: string, deploymentId: string): Promise<Record<string, unknown>> {
    const found = await new DeploymentRepository(this.deps.db).findWithLatestRevision(tenantId, deploymentId);
    if (!found) throw deploymentNotFound(deploymentId);
    const { deployment, latest } = found;
    return deploymentView(deployment, latest, latest ? this.secretsForView(latest) : [], this.deps.config.unusedAfterDays);
  }

  /**
   * `get` as its JSON text, for the poll CI repeats: the view's version (two row versions) is read and the view
   * serialized once per version (and while its UNUSED/READY status holds); only a changed one is read whole.
   */
  async getJson(tenantId: string, deploymentId: string): Promise<string> {
    const repository = new DeploymentRepository(this.deps.db);
    const version = await repository.viewVersion(tenantId, deploymentId);
    if (version === null) throw deploymentNotFound(deploymentId);
    const now = Date.now();
    const cached = this.serializedViews.get(deploymentId);
    if (cached?.version === version && now < cached.until) return cached.json;
    const found = await repository.findWithLatestRevision(tenantId, deploymentId);
    if (!found) throw deploymentNotFound(deploymentId);
    const { deployment, latest } = found;
    const { unusedAfterDays } = this.deps.config;
    const json = JSON.stringify(deploymentView(deployment, latest, latest ? this.secretsForView(latest) : [], unusedAfterDays));
    const until = effectiveStatusKeptUntil(deployment, unusedAfterDays, now);
    this.serializedViews.set(deploymentId, { version: found.version, json, until });
    return json;
  }

  async list(tenantId: string, filters: { nameContains?: string; status?: string; limit: number; offset: number }) {
    const deployments = await new DeploymentRepository(this.deps.db).list(tenantId, {
      ...filters,
      unusedAfterDays: this.deps.config.unusedAfterDays,
    });
    const resources = await Promise.all(deployments.map((deployment) => this.view(deployment)));
    return { resources, offset: filters.offset + resources.length };
  }

  async patch(tenantId: string, deploymentId: string, request: PatchDeploymentRequest): Promise<Record<string, unknown>> {
    const warnings = await this.deps.db
      .transaction((trx) => this.applyPatch(trx, tenantId, deploymentId, request))
      .catch((error: { code?: string; constraint?: string }) => {
        if (error.code === PG_UNIQUE_VIOLATION && error.constraint === CUSTOM_URL_INDEX) {
          throw customUrlTaken(request.source_config?.custom_url);
        }
        throw error;
      });
    this.pokeOutbox();
    return { ...(await this.get(tenantId, deploymentId)), warnings };
  }

  /**
   * The patch, in the caller's transaction: the deployment's new source config, and a new revision when what runs
   * changes (revision config, secrets, resource_spec, install or build command). Returns the resource_spec warnings.
   */
  private async applyPatch(
    trx: DbOrTx,
    tenantId: string,
    deploymentId: string,
    request: PatchDeploymentRequest,
  ): Promise<string[]> {
    const deployments = new DeploymentRepository(trx);
    const deployment = await deployments.find(tenantId, deploymentId, { forUpdate: true });
    if (!deployment) throw deploymentNotFound(deploymentId);
    if (deployment.status === 'AWAITING_DELETE') throw new ConflictError(`Deployment ID ${deploymentId} is being deleted.`);
    const sourceConfig = patchedSourceConfig(this.deps.config, deployment, request);
    const warnings = checkResourceSpec(sourceConfig, this.resourcePolicy());

    const latest = deployment.latestRevisionId
      ? await new RevisionRepository(trx).find(deploymentId, deployment.latestRevisionId)
      : null;
    const revisionPatch = Object.fromEntries(
      Object.entries(request.source_revision_config ?? {}).filter(([, value]) => value !== null && value !== undefined),
    ) as SourceRevisionConfig;
    const needsRevision = patchNeedsRevision(request, revisionPatch, deployment.sourceConfig, sourceConfig);

    await deployments.update(deploymentId, {
      sourceConfig,
      imageVersion: request.image_version === undefined ? undefined : request.image_version,
    });
    if (!needsRevision) return warnings;
    if (deployment.source === 'codehost' && revisionPatch.image_uri) {
      throw new InputError("source_revision_config.image_uri must be null for a 'codehost' deployment.");
    }
    const storedSecrets = latest ? this.decryptSecrets(latest) : [];
    let secrets = storedSecrets;
    if (request.secrets) {
      assertSecretsAllowed(request.secrets);
      secrets = mergeSecrets(storedSecrets, request.secrets);
    }
    const revisionConfig = { ...(latest?.sourceRevisionConfig ?? {}), ...revisionPatch };
    delete revisionConfig.repo_commit_sha;
    await this.addRevision(trx, deployment, sourceConfig, revisionConfig, secrets, { warnings });
    return warnings;
  }

  /** A new revision with an older revision's configuration (rollback). */
  async redeploy(tenantId: string, deploymentId: string, revisionId: string): Promise<Record<string, unknown>> {
    await this.deps.db.transaction(async (trx) => {
      const deployments = new DeploymentRepository(trx);
      const deployment = await deployments.find(tenantId, deploymentId, { forUpdate: true });
      if (!deployment) throw deploymentNotFound(deploymentId);
      if (deployment.status === 'AWAITING_DELETE') throw new ConflictError(`Deployment ID ${deploymentId} is being deleted.`);
      const older = await new RevisionRepository(trx).find(deploymentId, revisionId);
      if (!older) throw revisionNotFound(revisionId);
      const sourceConfig = { ...older.sourceConfig };
      await deployments.update(deploymentId, { sourceConfig });
      const revisionConfig = { ...older.sourceRevisionConfig };
      delete revisionConfig.repo_commit_sha;
      // The earlier revision's commit, not the tip its ref points at now: a rollback runs what ran before.
      await this.addRevision(trx, deployment, sourceConfig, revisionConfig, this.decryptSecrets(older), {
        redeployedFrom: older,
      });
    });
    this.pokeOutbox();
    return this.get(tenantId, deploymentId);
  }

  /** Marks AWAITING_DELETE and hands the teardown to the deployment workflow. */
  async delete(tenantId: string, deploymentId: string, deleteTracingProject: boolean): Promise<void> {
    await this.deps.db.transaction(async (trx) => {
      const deployments = new DeploymentRepository(trx);
      const deployment = await deployments.find(tenantId, deploymentId, { forUpdate: true });
      if (!deployment) throw deploymentNotFound(deploymentId);
      await deployments.markAwaitingDelete(deploymentId);
      const message: OutboxMessage = {
        kind: 'delete_deployment',
        deploymentId,
        payload: { tenantId, deploymentName: deployment.name, deleteTracingProject },
      };
      await writeOutboxMessage(trx, message, this.deps.config.taskQueuePrefix);
    });
    this.pokeOutbox();
  }

  /**
   * The revision's secrets with their values blanked, for responses (which show them masked). Remembered by the
   * stored ciphertext, which never changes for a revision, so polling a revision decrypts nothing.
   */
  secretsForView(revision: Pick<RevisionRecord, 'secretsEncrypted'>): Secret[] {
    const cached = secretNamesByCiphertext.get(revision.secretsEncrypted);
    if (cached) return cached;
    const names = this.decryptSecrets(revision).map((secret) => ({ name: secret.name, value: '' }));
    secretNamesByCiphertext.set(revision.secretsEncrypted, names);
    return names;
  }

  decryptSecrets(revision: Pick<RevisionRecord, 'secretsEncrypted'>): Secret[] {
    return JSON.parse(this.deps.secretBox.decrypt(revision.secretsEncrypted)) as Secret[];
  }

  private async view(deployment: DeploymentRecord): Promise<Record<string, unknown>> {
    const latest = deployment.latestRevisionId
      ? await new RevisionRepository(this.deps.db).find(deployment.id, deployment.latestRevisionId)
      : null;
    return deploymentView(deployment, latest, latest ? this.secretsForView(latest) : [], this.deps.config.unusedAfterDays);
  }

  /** Wakes the outbox relay, if this process runs one, after a commit that wrote outbox rows. */
  pokeOutbox(): void {
    this.deps.pokeOutbox?.();
  }

  /**
   * A new revision and its outbox row (call inside the caller's transaction, then `pokeOutbox()`).
   * `redeployedFrom`: the revision a redeploy copies (its commit is built); `commitSha`: the commit to build instead of
   * the ref's tip (a push's); `warnings`: lines for the revision's log (resource_spec fields this target ignores).
   */
  async addRevision(
    trx: DbOrTx,
    deployment: Pick<DeploymentRecord, 'id' | 'tenantId' | 'name' | 'source'>,
    sourceConfig: SourceConfig,
    revisionConfig: SourceRevisionConfig,
    secrets: Secret[],
    options: {
      redeployedFrom?: Pick<RevisionRecord, 'id' | 'repoCommitSha'>;
      commitSha?: string;
      warnings?: string[];
    } = {},
  ): Promise<RevisionRecord> {
    const { redeployedFrom = null, commitSha = null, warnings = [] } = options;
    const revisions = new RevisionRepository(trx);
    const revision = await revisions.insert({
      id: crypto.randomUUID(),
      deploymentId: deployment.id,
      tenantId: deployment.tenantId,
      source: deployment.source,
      sourceConfig,
      sourceRevisionConfig: revisionConfig,
      secretsEncrypted: this.deps.secretBox.encrypt(JSON.stringify(secrets)),
      redeployedFromRevisionId: redeployedFrom?.id ?? null,
      repoCommitSha: redeployedFrom?.repoCommitSha ?? commitSha,
    });
    await revisions.appendLogs(revision.id, 'warn', warnings);
    await new DeploymentRepository(trx).update(deployment.id, { latestRevisionId: revision.id });
    const message: OutboxMessage = {
      kind: 'enqueue_revision',
      deploymentId: deployment.id,
      payload: {
        revisionId: revision.id,
        revisionNumber: revision.number,
        repoRef: revisionConfig.repo_ref ?? revisionConfig.image_uri ?? null,
        tenantId: deployment.tenantId,
        deploymentName: deployment.name,
      },
    };
    await writeOutboxMessage(trx, message, this.deps.config.taskQueuePrefix);
    return revision;
  }
}

async function assertIntegrationExists(trx: DbOrTx, tenantId: string, integrationId: string): Promise<void> {
  const found = await trx('codehost_integrations').where({ id: integrationId, tenant_id: tenantId }).first('id');
  if (!found)
    throw new InputError(`Integration ${integrationId} not found; list yours with GET /v1/integrations/codehost/install.`);
}
