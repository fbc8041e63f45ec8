/**
 * Rows and dependencies the activity and target tests share: a tenant with a deployment and revisions written
 * straight to the database (the API is not under test here), real activity dependencies and a ProcessTarget whose
 * instances run the fake runtime script.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ActivityDeps } from '../../../activities';
import type { GraphxConfig } from '../../../src/config';
import type { Db } from '../../../src/db/knex';
import type { SecretBox } from '../../../src/security/secretBox';
import { ProcessTarget, type ProcessTargetOptions } from '../../../src/targets/process';
import { HostBuilder } from '../../../src/builders/host/hostBuilder';
import { ImageBuilder } from '../../../src/builders/image/imageBuilder';
import type { RevisionImages } from '../../../src/containers/revisionImages';
import { buildPaths } from '../../../src/pipeline/revisionSpec';
import { createTenant, testConfig, testDb, testSecretBox } from '../../support/env';

export const FAKE_RUNTIME = { command: process.execPath, args: [path.join(__dirname, '..', 'targets', 'fakeRuntime.js')] };

export interface RevisionOptions {
  repoUrl?: string;
  repoRef?: string;
  graphxConfigPath?: string;
  installCommand?: string | null;
  buildCommand?: string | null;
  resourceSpec?: Record<string, unknown> | null;
  integrationId?: string | null;
  secrets?: Array<{ name: string; value: string }>;
}

export interface TestDeployment {
  tenantId: string;
  /** An API key of the deployment's tenant. */
  apiKey: string;
  deploymentId: string;
  name: string;
  revisionId: string;
}

/** A tenant, a deployment (AWAITING_DATABASE) with its tracing project, and its first revision. */
export async function createDeployment(db: Db, secretBox: SecretBox, options: RevisionOptions = {}): Promise<TestDeployment> {
  const { tenantId, apiKey } = await createTenant(db, 'pipeline');
  const deploymentId = crypto.randomUUID();
  const name = `app-${crypto.randomBytes(4).toString('hex')}`;
  const tracingProjectId = crypto.randomUUID();
  await db('deployments').insert({
    id: deploymentId,
    tenant_id: tenantId,
    name,
    source: 'codehost',
    source_config: sourceConfig(options),
    status: 'AWAITING_DATABASE',
    tracing_project_id: tracingProjectId,
  });
  await db('tracing_projects').insert({ id: tracingProjectId, tenant_id: tenantId, name, deployment_id: deploymentId });
  const revisionId = await addRevision(db, secretBox, deploymentId, options);
  return { tenantId, apiKey, deploymentId, name, revisionId };
}

/** A new revision of the deployment (status AWAITING_BUILD). */
export async function addRevision(
  db: Db,
  secretBox: SecretBox,
  deploymentId: string,
  options: RevisionOptions = {},
): Promise<string> {
  const deployment = await db('deployments').where({ id: deploymentId }).first('tenant_id');
  const { max } = (await db('revisions').where({ deployment_id: deploymentId }).max('number as max').first()) as {
    max: number | null;
  };
  const revisionId = crypto.randomUUID();
  await db('revisions').insert({
    id: revisionId,
    deployment_id: deploymentId,
    tenant_id: deployment.tenant_id,
    number: (max ?? 0) + 1,
    status: 'AWAITING_BUILD',
    source: 'codehost',
    source_config: sourceConfig(options),
    source_revision_config: {
      repo_ref: options.repoRef ?? 'main',
      graphx_config_path: options.graphxConfigPath ?? 'graphx.json',
    },
    secrets_encrypted: secretBox.encrypt(JSON.stringify(options.secrets ?? [])),
  });
  await db('deployments').where({ id: deploymentId }).update({ latest_revision_id: revisionId });
  return revisionId;
}

function sourceConfig(options: RevisionOptions): Record<string, unknown> {
  return {
    repo_url: options.repoUrl ?? 'file:///nonexistent',
    integration_id: options.integrationId ?? null,
    install_command: options.installCommand ?? null,
    build_command: options.buildCommand ?? null,
    resource_spec: options.resourceSpec ?? null,
  };
}

/** Writes files into the revision's build dir as if cloned (rollout tests need no git). */
export function writeBuild(config: GraphxConfig, revisionId: string, files: Record<string, string> = {}): string {
  const { src } = buildPaths(config.dataDir, revisionId);
  for (const [file, content] of Object.entries({ 'graphx.json': '{"graphs":{"agent":"./graph.js:graph"}}', ...files })) {
    fs.mkdirSync(path.dirname(path.join(src, file)), { recursive: true });
    fs.writeFileSync(path.join(src, file), content);
  }
  return src;
}

export interface TestDeps extends ActivityDeps {
  /** The concrete target, so tests can reach its gateway. */
  target: ProcessTarget;
  close: () => Promise<void>;
}

/** Real dependencies on the run's database; a ProcessTarget running the fake runtime, with short timings. */
export function createTestDeps(
  overrides: Record<string, string> = {},
  targetOptions: Partial<ProcessTargetOptions> = {},
  shared?: { config: GraphxConfig; db: Db; secretBox: SecretBox },
): TestDeps {
  const config = shared?.config ?? testConfig(overrides);
  const db = shared?.db ?? testDb();
  const secretBox = shared?.secretBox ?? testSecretBox(config);
  const target = new ProcessTarget({
    config,
    db,
    secretBox,
    instanceCommand: FAKE_RUNTIME,
    timings: { healthTimeoutMs: 15_000, routeSettleMs: 700, drainTimeoutMs: 5_000 },
    ...targetOptions,
  });
  return {
    config,
    db,
    secretBox,
    target,
    builder: new HostBuilder(config),
    close: async () => {
      await target.stopAll();
      if (!shared) await db.destroy();
    },
  };
}

/** A MockActivityEnvironment that keeps the SDK's activity logging quiet (failures are asserted, not printed). */
export function activityEnv(): MockActivityEnvironment {
  return new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR', () => {}) });
}

/** Runs one activity in a fresh mock environment, keeping its parameter and result types. */
export function runActivity<A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> {
  return activityEnv().run(fn as (...a: unknown[]) => Promise<R>, ...args) as Promise<R>;
}

/** `deps` building with the container runner's image builder on `images` (the same test database and target). */
export function withImageBuilder<T extends TestDeps>(deps: T, images: RevisionImages): T & { builder: ImageBuilder } {
  return Object.assign(deps, { builder: new ImageBuilder({ config: deps.config, db: deps.db, images }) });
}
