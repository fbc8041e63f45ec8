/** Joi schemas of the deployment and revision endpoints (CONTRACT §2.2, §2.3); they also feed /openapi.json. */
import Joi from 'joi';
import { DEPLOYMENT_STATUSES, REVISION_STATUSES } from '@graphx/contract/statuses';

export const DEPLOYMENT_NAME_PATTERN = /^[a-z][a-z0-9-]{0,62}$/;
export const SOURCES = ['codehost', 'external_docker', 'internal_docker'] as const;
export type DeploymentSource = (typeof SOURCES)[number];
export const MASKED_SECRET = '********';

const stringMap = Joi.object().pattern(Joi.string(), Joi.string());
const cpu = Joi.number().greater(0).max(64).allow(null);
const memory = Joi.number().integer().min(1).max(1_048_576).allow(null);
const scale = Joi.number().integer().min(0).max(100).allow(null);
const container = Joi.object({
  name: Joi.string().max(253).required(),
  image: Joi.string().max(2000).allow(null),
}).unknown(true);

export const resourceSpecSchema = Joi.object({
  min_scale: Joi.number().integer().min(1).max(10).allow(null),
  max_scale: Joi.number().integer().min(1).max(100).allow(null),
  cpu,
  cpu_limit: cpu,
  memory_mb: memory,
  memory_limit_mb: Joi.number().integer().min(64).max(1_048_576).allow(null),
  queue_min_scale: scale,
  queue_max_scale: scale,
  queue_cpu: cpu,
  queue_cpu_limit: cpu,
  queue_memory_mb: memory,
  queue_memory_limit_mb: memory,
  orchestrator_cpu: cpu,
  orchestrator_cpu_limit: cpu,
  orchestrator_memory_mb: memory,
  orchestrator_memory_limit_mb: memory,
  orchestrator_min_scale: scale,
  orchestrator_max_scale: scale,
  executor_cpu: cpu,
  executor_cpu_limit: cpu,
  executor_memory_mb: memory,
  executor_memory_limit_mb: memory,
  redis_memory_mb: memory,
  db_cpu: cpu,
  db_cpu_limit: cpu,
  db_memory_mb: memory,
  db_memory_limit_mb: memory,
  db_storage_gi: Joi.number().integer().min(1).max(65536).allow(null),
  db_max_connections: Joi.number().integer().min(1).max(10000).allow(null),
  labels: stringMap.allow(null),
  annotations: stringMap.allow(null),
  service_account_name: Joi.string().max(253).allow(null),
  image_pull_secrets: Joi.array()
    .items(Joi.object({ name: Joi.string().required() }))
    .allow(null),
  volumes: Joi.array()
    .items(Joi.object({ name: Joi.string().required() }).unknown(true))
    .allow(null),
  volume_mounts: Joi.array()
    .items(
      Joi.object({
        name: Joi.string().required(),
        mountPath: Joi.string(),
        subPath: Joi.string(),
        mountPropagation: Joi.string(),
        readOnly: Joi.boolean(),
        subPathExpr: Joi.string(),
      }),
    )
    .allow(null),
  init_containers: Joi.array().items(container).allow(null),
  sidecars: Joi.array().items(container).allow(null),
});

const sourceConfigFields = {
  integration_id: Joi.string().guid().allow(null),
  repo_url: Joi.string().max(2000).allow(null),
  build_on_push: Joi.boolean().allow(null),
  custom_url: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .max(2000)
    .allow(null)
    .description('An extra address of the deployment: the gateway routes requests for its host to it.'),
  resource_spec: resourceSpecSchema.allow(null),
  listener_id: Joi.string().guid().allow(null),
  listener_config: Joi.object({ k8s_namespace: Joi.string().max(63).allow(null) }).allow(null),
  install_command: Joi.string().max(4000).allow(null),
  build_command: Joi.string().max(4000).allow(null),
};

const sourceRevisionConfigFields = {
  // A ref starting with "-" would be read by git as an option (--upload-pack=...).
  repo_ref: Joi.string().min(1).max(255).pattern(/^[^-]/, 'a git ref (not starting with "-")').allow(null),
  graphx_config_path: Joi.string().min(1).max(500).allow(null),
  image_uri: Joi.string().min(1).max(2000).allow(null),
};

export const secretSchema = Joi.object({
  name: Joi.string()
    .min(1)
    .max(255)
    .pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, 'environment variable name')
    .required(),
  value: Joi.string().allow('').max(65536).required(),
});

const responseOnlyRevisionFields = {
  repo_commit_sha: Joi.any().strip(),
  image_ref: Joi.any().strip(),
  image_digest: Joi.any().strip(),
};

export const createDeploymentBody = Joi.object({
  name: Joi.string().pattern(DEPLOYMENT_NAME_PATTERN, 'lowercase letters, digits and -, starting with a letter').required(),
  source: Joi.string()
    .valid(...SOURCES)
    .required(),
  source_config: Joi.object(sourceConfigFields).required(),
  // repo_commit_sha and the image fields are response-only: a client echoing a GET body back is accepted, they dropped.
  source_revision_config: Joi.object({ ...sourceRevisionConfigFields, ...responseOnlyRevisionFields }).required(),
  secrets: Joi.array().items(secretSchema).max(200).default([]),
  image_version: Joi.string().max(100).allow(null),
});

export const patchDeploymentBody = Joi.object({
  name: Joi.any(),
  source: Joi.any(),
  source_config: Joi.object(sourceConfigFields).allow(null),
  source_revision_config: Joi.object({ ...sourceRevisionConfigFields, ...responseOnlyRevisionFields }).allow(null),
  secrets: Joi.array().items(secretSchema).max(200).allow(null),
  image_version: Joi.string().max(100).allow(null),
});

export const deploymentIdParams = Joi.object({ deployment_id: Joi.string().guid().required() });
export const revisionParams = Joi.object({
  deployment_id: Joi.string().guid().required(),
  revision_id: Joi.string().guid().required(),
});

const paging = {
  limit: Joi.number().integer().min(1).max(100).default(20),
  offset: Joi.number().integer().min(0).default(0),
};

export const listDeploymentsQuery = Joi.object({
  ...paging,
  name_contains: Joi.string().max(63),
  status: Joi.string().valid(...DEPLOYMENT_STATUSES),
});

export const listRevisionsQuery = Joi.object({
  ...paging,
  status: Joi.string().pattern(
    new RegExp(`^(${REVISION_STATUSES.join('|')})(,(${REVISION_STATUSES.join('|')}))*$`),
    'comma list of revision statuses',
  ),
});

/** The long-poll form of GET revision: answer once the status differs from `wait_for_change_from`. */
export const getRevisionQuery = Joi.object({
  wait_for_change_from: Joi.string()
    .valid(...REVISION_STATUSES)
    .description('Hold the request until the status differs from this one (or `timeout` passes), then answer.'),
  timeout: Joi.number()
    .integer()
    .min(1)
    .max(60)
    .default(30)
    .description('Seconds to hold a `wait_for_change_from` request before answering with the unchanged revision.'),
});

export const deleteDeploymentQuery = Joi.object({ delete_tracing_project: Joi.boolean().default(false) });

export const logsQuery = Joi.object({
  ...paging,
  limit: Joi.number().integer().min(1).max(1000).default(100),
  order: Joi.string().valid('asc', 'desc').default('asc'),
});

// The stored shapes live with the repositories (src/db must not import upward); re-exported for the API layer.
import type { SourceConfig, SourceRevisionConfig } from '../db/repositories/sourceConfig';
export type { SourceConfig, SourceRevisionConfig };

export interface CreateDeploymentRequest {
  name: string;
  source: DeploymentSource;
  source_config: SourceConfig;
  source_revision_config: SourceRevisionConfig;
  secrets: Secret[];
  image_version?: string | null;
}

export interface PatchDeploymentRequest {
  name?: unknown;
  source?: unknown;
  source_config?: SourceConfig | null;
  source_revision_config?: SourceRevisionConfig | null;
  secrets?: Secret[] | null;
  image_version?: string | null;
}

export interface Secret {
  name: string;
  value: string;
}
