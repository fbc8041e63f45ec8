/** `graphx deploy`: create or update a deployment by name, then (by default) wait for its revision. */
import fs from 'node:fs';
import type { ApiClient } from './apiClient';
import { EXIT } from '@graphx/contract/exitCodes';
import { CliError } from './cliError';
import type { Reporter } from './reporter';
import { waitForRevision } from './waitRevision';

export interface DeployOptions {
  file?: string;
  name?: string;
  repoUrl?: string;
  ref?: string;
  configPath?: string;
  image?: string;
  installCommand?: string;
  buildCommand?: string;
  secret: string[];
  wait: boolean;
  timeoutMs: number;
}

interface DeploymentBody {
  id: string;
  name: string;
  latest_revision_id: string | null;
}

type Section = Record<string, unknown>;

/** The request body from `--file` (the API's own create body) with the flags laid over it. */
export function deploymentRequest(options: DeployOptions, env: NodeJS.ProcessEnv): Section {
  let body: Section = {};
  if (options.file) {
    try {
      body = JSON.parse(fs.readFileSync(options.file, 'utf8')) as Section;
    } catch (error) {
      throw new CliError(EXIT.usage, `Cannot read ${options.file} as JSON: ${(error as Error).message}`);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new CliError(EXIT.usage, `${options.file} must hold a JSON object (the body of POST /v2/deployments).`);
  }
  const sourceConfig: Section = { ...((body.source_config as Section | undefined) ?? {}) };
  const revisionConfig: Section = { ...((body.source_revision_config as Section | undefined) ?? {}) };
  const set = (section: Section, key: string, value: string | undefined) => {
    if (value !== undefined) section[key] = value;
  };
  set(sourceConfig, 'repo_url', options.repoUrl);
  set(sourceConfig, 'install_command', options.installCommand);
  set(sourceConfig, 'build_command', options.buildCommand);
  set(revisionConfig, 'repo_ref', options.ref);
  set(revisionConfig, 'graphx_config_path', options.configPath);
  set(revisionConfig, 'image_uri', options.image);
  const name = options.name ?? body.name;
  if (typeof name !== 'string' || !name)
    throw new CliError(EXIT.usage, 'A deployment name is needed: --name or "name" in --file.');
  const request: Section = {
    ...body,
    name,
    source: body.source ?? (options.image ? 'external_docker' : 'codehost'),
    source_config: sourceConfig,
    source_revision_config: revisionConfig,
  };
  if (options.secret.length) request.secrets = options.secret.map((secretName) => secretFromEnv(secretName, env));
  return request;
}

/** `--secret NAME` takes the value of the environment variable NAME; the value is never printed. */
function secretFromEnv(name: string, env: NodeJS.ProcessEnv): { name: string; value: string } {
  const value = env[name];
  if (value === undefined) throw new CliError(EXIT.usage, `--secret ${name}: the environment variable ${name} is not set.`);
  return { name, value };
}

/** Finds a deployment by exact name (the API filters by substring). */
export async function findDeploymentByName(client: ApiClient, name: string): Promise<DeploymentBody | null> {
  for (let offset = 0; ; offset += 100) {
    const page = await client.get<{ resources: DeploymentBody[] }>(
      `/v2/deployments?name_contains=${encodeURIComponent(name)}&limit=100&offset=${offset}`,
    );
    const found = page.resources.find((deployment) => deployment.name === name);
    if (found) return found;
    if (page.resources.length < 100) return null;
  }
}

export async function runDeploy(client: ApiClient, reporter: Reporter, options: DeployOptions): Promise<number> {
  const request = deploymentRequest(options, process.env);
  const existing = await findDeploymentByName(client, request.name as string);
  let deployment: DeploymentBody;
  if (existing) {
    // Name and source cannot change; PATCH ignores them, so they are left out to keep the request honest.
    const patch = { ...request };
    delete patch.name;
    delete patch.source;
    deployment = await client.patch<DeploymentBody>(`/v2/deployments/${existing.id}`, patch);
    if (deployment.latest_revision_id === existing.latest_revision_id)
      reporter.warn(`Nothing that makes a new revision changed; following revision ${deployment.latest_revision_id}.`);
    reporter.info(`Updated deployment ${deployment.name} (${deployment.id}).`);
  } else {
    deployment = await client.post<DeploymentBody>('/v2/deployments', request);
    reporter.info(`Created deployment ${deployment.name} (${deployment.id}).`);
  }
  const revisionId = deployment.latest_revision_id;
  if (!revisionId) throw new CliError(EXIT.failed, `Deployment ${deployment.id} has no revision.`);
  reporter.info(`Revision ${revisionId}.`);
  if (!options.wait) {
    reporter.result({ deployment_id: deployment.id, revision_id: revisionId, status: null, url: null }, revisionId);
    return EXIT.deployed;
  }
  return waitForRevision(client, reporter, { deploymentId: deployment.id, revisionId, timeoutMs: options.timeoutMs });
}
