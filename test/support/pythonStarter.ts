/**
 * LangChain's Python starter, `langchain-ai/new-langgraph-project` at c89ad19 (test/fixtures/starters/python, its files
 * and MIT licence unchanged): deployed through the public API with its own `langgraph.json`, then one run streamed
 * through the JavaScript SDK and one through the Python `langgraph-sdk`.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@langchain/langgraph-sdk';
import { ensurePythonClient, pythonSdkInterpreter } from '../../packages/runtime/test/integration/support/pythonSdk';
import { createGitRepo } from './gitRepos';
import { codehostDeployment, type PipelineStack } from './pipelineStack';

const STARTER = path.resolve(__dirname, '..', 'fixtures', 'starters', 'python');
export const PYTHON_STARTER_MS = 420_000;
// The starter's one node answers this whatever the input, naming the context parameter it was given (none).
const ANSWER = { call_model: { changeme: 'output from call_model. Configured with None' } };

const PYTHON_CLIENT = `
import asyncio, json, sys
from langgraph_sdk import get_client

async def main(url, key):
    client = get_client(url=url, api_key=key)
    updates = []
    async for part in client.runs.stream(None, "agent", input={"changeme": "from python"}, stream_mode="updates"):
        if part.event == "updates":
            updates.append(part.data)
    print(json.dumps(updates))

asyncio.run(main(sys.argv[1], sys.argv[2]))
`;

/** Deploys the starter with `pipeline` and checks a run through each SDK. */
export async function deployPythonStarter(pipeline: PipelineStack): Promise<void> {
  const skipReason = await ensurePythonClient();
  if (skipReason) throw new Error(`the Python SDK is needed here: ${skipReason}`);
  const repo = createGitRepo(STARTER);
  const request = codehostDeployment(`starter-py-${crypto.randomBytes(3).toString('hex')}`, repo.url);
  request.source_revision_config.graphx_config_path = 'langgraph.json';
  const created = await pipeline.api('POST', '/v2/deployments', request);
  expect(created.status).toBe(201);
  const { id, latest_revision_id: revisionId } = created.body;
  await pipeline.waitForRevision(id, revisionId, (status) => status === 'DEPLOYED' || status.endsWith('_FAILED'), 400_000);
  const revision = (await pipeline.api('GET', `/v2/deployments/${id}/revisions/${revisionId}`)).body;
  expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
  const { url } = (await pipeline.api('GET', `/v2/deployments/${id}`)).body;

  const client = new Client({ apiUrl: url, apiKey: pipeline.apiKey });
  const jsUpdates: unknown[] = [];
  for await (const part of client.runs.stream(null, 'agent', { input: { changeme: 'from js' }, streamMode: 'updates' })) {
    if (part.event === 'updates') jsUpdates.push(part.data);
  }
  expect(jsUpdates).toEqual([ANSWER]);

  // Not spawnSync: the gateway that serves the client runs in this very process.
  const python = await promisify(execFile)(pythonSdkInterpreter, ['-c', PYTHON_CLIENT, url, pipeline.apiKey], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(JSON.parse(python.stdout)).toEqual([ANSWER]);
}
