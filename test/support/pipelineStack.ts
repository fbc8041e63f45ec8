/**
 * A whole control plane for end-to-end tests: `startStack` on the run's PostgreSQL and Temporal dev server (API,
 * outbox relay, gateway, and unless told otherwise an in-process worker with the real activities), plus the calls a
 * CI job makes through the public API.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { GraphxConfig } from '../../src/config';
import { startStack, type StackHandle } from '../../src/stack';
import { createTenant, testConfig, testEnv } from './env';

export interface PipelineStack {
  stack: StackHandle;
  apiKey: string;
  tenantId: string;
  dataDir: string;
  config: GraphxConfig;
  api: <T = any>(method: string, urlPath: string, body?: unknown) => Promise<{ status: number; body: T }>;
  /** Polls the revision until `done(status)`; returns every distinct status seen, in order. */
  waitForRevision: (
    deploymentId: string,
    revisionId: string,
    done: (status: string) => boolean,
    timeoutMs?: number,
  ) => Promise<string[]>;
  stop: () => Promise<void>;
}

/** npm's cache lives in the build HOME: one per test run keeps installs warm across stacks. */
function shareBuildHome(dataDir: string): void {
  const shared = path.join(testEnv.runDir(), 'shared-build-home');
  fs.mkdirSync(shared, { recursive: true });
  fs.symlinkSync(shared, path.join(dataDir, 'build-home'));
}

export async function startPipelineStack(
  options: { worker?: boolean; env?: Record<string, string> } = {},
): Promise<PipelineStack> {
  const config = testConfig({ GRAPHX_BUILD_TIMEOUT_SECONDS: '300', ...options.env });
  shareBuildHome(config.dataDir);
  const starting = startStack(config, { worker: options.worker, workflowBundlePath: testEnv.workflowBundlePath() });
  const stopLeftover = async () => (await starting.catch(() => null))?.stop();
  openStacks().add(stopLeftover);
  const stack = await starting;
  const { apiKey, tenantId } = await createTenant(stack.db, 'e2e');
  const api = async (method: string, urlPath: string, body?: unknown) => {
    const response = await fetch(`${stack.apiUrl}${urlPath}`, {
      method,
      headers: { 'X-Api-Key': apiKey, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const waitForRevision = async (
    deploymentId: string,
    revisionId: string,
    done: (status: string) => boolean,
    timeoutMs = 240_000,
  ) => {
    const seen: string[] = [];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`);
      if (body?.status && seen[seen.length - 1] !== body.status) seen.push(body.status);
      if (body?.status && done(body.status)) return seen;
      if (Date.now() > deadline) {
        const logs = await api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?order=desc&limit=20`);
        throw new Error(
          `revision ${revisionId} stuck; saw ${seen.join(' → ')}; message: ${body?.status_message}; logs: ${JSON.stringify(logs.body)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const stop = async () => {
    openStacks().delete(stopLeftover);
    await stack.stop();
  };
  return { stack, apiKey, tenantId, dataDir: config.dataDir, config, api, waitForRevision, stop };
}

/**
 * Stoppers of the stacks this test file started and has not stopped, on the file's global: the test environment
 * (test/support/testEnvironment.js) runs what is left after the file's last hook.
 */
function openStacks(): Set<() => Promise<void>> {
  const holder = globalThis as { __graphxOpenStacks?: Set<() => Promise<void>> };
  return (holder.__graphxOpenStacks ??= new Set());
}

/** The request a CI job sends to deploy a repository. */
export function codehostDeployment(
  name: string,
  repoUrl: string,
  extra: { sourceConfig?: Record<string, unknown>; repoRef?: string; secrets?: unknown[] } = {},
) {
  return {
    name,
    source: 'codehost',
    source_config: { repo_url: repoUrl, ...extra.sourceConfig },
    source_revision_config: { repo_ref: extra.repoRef ?? 'main', graphx_config_path: 'graphx.json' },
    secrets: extra.secrets ?? [],
  };
}

/** Reads an SSE response into `{event, data}` pairs. */
export async function readSse(response: Response): Promise<Array<{ event: string; data: unknown }>> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = /^data: (.*)$/m.exec(block)?.[1];
      return { event, data: data === undefined ? undefined : JSON.parse(data) };
    });
}

/** Streams one run of the pipeline-echo fixture's `agent` through a deployment URL (`updates` mode); 200 asserted. */
export async function streamEchoRun(url: string, apiKey: string, input: string) {
  const response = await fetch(`${url}/runs/stream`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Api-Key': apiKey },
    body: JSON.stringify({ assistant_id: 'agent', input: { input }, stream_mode: 'updates' }),
  });
  expect(response.status).toBe(200);
  return readSse(response);
}
