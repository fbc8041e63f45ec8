/**
 * Joi descriptions of what views.ts answers, for /openapi.json only (responses are never validated at run time).
 * Each has an example; the OpenAPI test checks every example against its schema and real answers against these.
 */
import Joi from 'joi';
import { DEPLOYMENT_STATUSES, REVISION_STATUSES } from '@graphx/contract/statuses';
import { MASKED_SECRET, resourceSpecSchema, SOURCES } from './schemas';

const id = Joi.string().guid();
const timestamp = Joi.string().isoDate();
const text = Joi.string().allow(null);
const DEPLOYMENT_ID = '5f0c7f0e-8d1e-4c6b-9a43-0c1d2e3f4a5b';
const REVISION_ID = '0b6e2f3a-4c5d-4e7f-8a9b-1c2d3e4f5a6b';

const sourceConfig = Joi.object({
  integration_id: id.allow(null),
  repo_url: text,
  build_on_push: Joi.boolean(),
  custom_url: text,
  resource_spec: resourceSpecSchema.allow(null),
  listener_id: id.allow(null),
  listener_config: Joi.object({ k8s_namespace: text }).allow(null),
  install_command: text,
  build_command: text,
}).description('How the deployment is built and run (secrets excluded)');

const sourceRevisionConfig = Joi.object({
  repo_ref: text.description('Branch, tag or commit the revision builds'),
  graphx_config_path: text.description('Path of graphx.json in the repository'),
  image_uri: text.description('Image of an external_docker deployment'),
  repo_commit_sha: text.description('Commit the revision was built from, once cloned'),
  image_ref: text.description('Image the revision runs (container runner): built, or its pulled image_uri'),
  image_digest: text.description('Digest of that image, once built or pulled'),
});

const maskedSecrets = Joi.array()
  .items(Joi.object({ name: Joi.string().required(), value: Joi.string().valid(MASKED_SECRET).required() }))
  .description('Secret names; values are never returned');

const exampleSourceConfig = {
  integration_id: null,
  repo_url: 'https://github.com/acme/support-agent',
  build_on_push: false,
  custom_url: null,
  resource_spec: null,
  listener_id: null,
  listener_config: null,
  install_command: null,
  build_command: null,
};
const exampleRevisionConfig = {
  repo_ref: 'main',
  graphx_config_path: 'graphx.json',
  image_uri: null,
  repo_commit_sha: '3f786850e387550fdab836ed7e6dc881de23001b',
  image_ref: null,
  image_digest: null,
};

export const deploymentViewSchema = Joi.object({
  id: id.required(),
  tenant_id: id.required(),
  name: Joi.string().required(),
  source: Joi.string()
    .valid(...SOURCES)
    .required(),
  source_config: sourceConfig.required(),
  source_revision_config: sourceRevisionConfig.required(),
  secrets: maskedSecrets.required(),
  status: Joi.string()
    .valid(...DEPLOYMENT_STATUSES)
    .required(),
  latest_revision_id: id.allow(null).required(),
  active_revision_id: id.allow(null).required().description('The revision serving traffic (null until one is DEPLOYED)'),
  image_version: text.required(),
  url: text.required().description('Where the deployed app answers, through the gateway'),
  tracing_project_id: id.allow(null).required(),
  created_at: timestamp.required(),
  updated_at: timestamp.required(),
  warnings: Joi.array()
    .items(Joi.string())
    .description(
      'Create and PATCH only: each resource_spec field that has no effect where revisions run (also in the revision log)',
    ),
})
  .description('A deployment')
  .example({
    id: DEPLOYMENT_ID,
    tenant_id: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a',
    name: 'support-agent',
    source: 'codehost',
    source_config: exampleSourceConfig,
    source_revision_config: exampleRevisionConfig,
    secrets: [{ name: 'OPENAI_API_KEY', value: MASKED_SECRET }],
    status: 'READY',
    latest_revision_id: REVISION_ID,
    active_revision_id: REVISION_ID,
    image_version: null,
    url: 'https://graphx.example.com/apps/support-agent',
    tracing_project_id: '2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d',
    created_at: '2026-11-20T09:30:00.000Z',
    updated_at: '2026-11-20T09:34:12.000Z',
  });

export const revisionViewSchema = Joi.object({
  id: id.required(),
  deployment_id: id.required(),
  number: Joi.number().integer().min(1).required().description('1 for the first revision of a deployment, then +1'),
  status: Joi.string()
    .valid(...REVISION_STATUSES)
    .required(),
  status_message: text.required().description('Why a revision failed, was skipped or interrupted'),
  source: Joi.string()
    .valid(...SOURCES)
    .required(),
  source_config: sourceConfig.required(),
  source_revision_config: sourceRevisionConfig.required(),
  secrets: maskedSecrets.required(),
  redeployed_from_revision_id: id.allow(null).required(),
  created_at: timestamp.required(),
  updated_at: timestamp.required(),
})
  .description('A revision: one build and rollout of a deployment')
  .example({
    id: REVISION_ID,
    deployment_id: DEPLOYMENT_ID,
    number: 3,
    status: 'BUILD_FAILED',
    status_message: 'npm ci exited with code 1',
    source: 'codehost',
    source_config: exampleSourceConfig,
    source_revision_config: exampleRevisionConfig,
    secrets: [{ name: 'OPENAI_API_KEY', value: MASKED_SECRET }],
    redeployed_from_revision_id: null,
    created_at: '2026-11-20T09:30:00.000Z',
    updated_at: '2026-11-20T09:32:40.000Z',
  });

export const logPageSchema = Joi.object({
  logs: Joi.array()
    .items(
      Joi.object({
        id: Joi.string().required().description('Line id, increasing in the order lines were written'),
        timestamp: timestamp.required(),
        level: Joi.string().required(),
        message: Joi.string().allow('').required(),
      }),
    )
    .required(),
  next_offset: Joi.number().integer().allow(null).required().description('Offset of the next page; null on the last'),
})
  .description('A page of log lines')
  .example({
    logs: [
      { id: '41', timestamp: '2026-11-20T09:31:02.120Z', level: 'info', message: 'npm ci' },
      { id: '42', timestamp: '2026-11-20T09:31:09.877Z', level: 'error', message: 'npm ERR! missing script: build' },
    ],
    next_offset: null,
  });

/** The 202 answer of interrupt and retry. */
export const signalSentSchema = Joi.object({ detail: Joi.string().required() })
  .description('The request was passed to the revision; follow its status with GET')
  .example({ detail: `Retry sent to revision ${REVISION_ID}.` });

/** What a client sends to create a codehost deployment (shown as the request example). */
export const createDeploymentExample = {
  name: 'support-agent',
  source: 'codehost',
  source_config: { repo_url: 'https://github.com/acme/support-agent', build_on_push: false },
  source_revision_config: { repo_ref: 'main', graphx_config_path: 'graphx.json' },
  secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-…' }],
};
