/**
 * A private repository behind a real git smart-HTTP server that requires a code-host token: a deployment with the
 * integration (obtained through the real OAuth flow and setup callback) clones and deploys it; without the
 * integration the build stage fails with a clear message; the token appears in no log, revision field or file.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { getIntegrationCloneToken } from '../../src/auth/integrationCredentials';
import { findFreePort } from '@graphx/kit/net/ports';
import { TestBrowser } from '../integration/auth/browser';
import { testSecretBox } from '../support/env';
import { startGitHttpServer, type GitHttpServer } from '../support/gitHttpServer';
import { createGitRepo } from '../support/gitRepos';
import { startOAuthServer, type TestOAuthServer } from '../support/oauthServer';
import { codehostDeployment, readSse, startPipelineStack, type PipelineStack } from '../support/pipelineStack';

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'apps', 'pipeline-echo');

describe('deployments from a private repository through a code-host integration', () => {
  let pipeline: PipelineStack;
  let oauth: TestOAuthServer;
  let gitServer: GitHttpServer;
  let integrationId: string;
  let token: string;
  let repoUrl: string;

  beforeAll(async () => {
    const port = await findFreePort();
    const apiUrl = `http://127.0.0.1:${port}`;
    pipeline = await startPipelineStack({ env: { PORT: String(port), GRAPHX_PUBLIC_URL: apiUrl } });
    oauth = await startOAuthServer({ redirectUris: [`${apiUrl}/v2/auth/callback/codehost`] });
    const client = oauth.clients.client_secret_post;
    const provider = await pipeline.api('POST', '/v2/auth/providers', {
      provider_id: 'codehost',
      name: 'Code host app',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      auth_url: oauth.authUrl,
      token_url: oauth.tokenUrl,
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(provider.status).toBe(200);
    const started = await pipeline.api('POST', '/v2/auth/authenticate', {
      provider: 'codehost',
      scopes: ['repo', 'offline_access'],
    });
    expect(started.status).toBe(200);
    const callback = await new TestBrowser().authorize(started.body.url, `${apiUrl}/v2/auth/callback/`);
    // The code-hosting app sends the install to the setup URL, with the code and state of the flow.
    const setup = new URL(callback.toString().replace('/callback/', '/setup/'));
    setup.searchParams.set('setup_action', 'install');
    setup.searchParams.set('installation_id', '4242');
    const installed = await fetch(setup);
    expect(installed.status).toBe(200);
    integrationId = ((await installed.json()) as { integration_id: string }).integration_id;
    const listed = await pipeline.api('GET', '/v1/integrations/codehost/install');
    expect(JSON.stringify(listed.body)).toContain(integrationId);

    token = await getIntegrationCloneToken(
      { db: pipeline.stack.db, secretBox: testSecretBox(pipeline.config), config: pipeline.config },
      pipeline.tenantId,
      integrationId,
    );
    const reposDir = path.join(pipeline.dataDir, 'code-host');
    fs.mkdirSync(reposDir, { recursive: true });
    const source = createGitRepo(FIXTURE);
    execFileSync('git', ['clone', '-q', '--bare', source.dir, path.join(reposDir, 'private-app.git')]);
    gitServer = await startGitHttpServer({ reposDir, requiredToken: token });
    repoUrl = `${gitServer.url}/private-app.git`;
  });
  afterAll(async () => {
    await gitServer?.stop();
    await oauth?.stop();
    await pipeline?.stop();
  });

  const settled = (status: string) => ['DEPLOYED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'INTERRUPTED'].includes(status);

  async function everythingSaidAbout(deploymentId: string, revisionId: string): Promise<string> {
    const parts = await Promise.all([
      pipeline.api('GET', `/v2/deployments/${deploymentId}`),
      pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`),
      pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs?limit=1000`),
      pipeline.api('GET', `/v2/deployments/${deploymentId}/logs?limit=1000`),
    ]);
    const rows = await pipeline.stack.db('revisions').where({ id: revisionId });
    return JSON.stringify([...parts.map((part) => part.body), rows]);
  }

  function filesMentioning(dir: string, needle: string): string[] {
    try {
      return execFileSync('grep', ['-rlF', needle, dir], { encoding: 'utf8' }).split('\n').filter(Boolean);
    } catch {
      return [];
    }
  }

  it('clones with the integration’s token, deploys, and leaves the token in no log line, revision field or build file', async () => {
    const created = await pipeline.api(
      'POST',
      '/v2/deployments',
      codehostDeployment('private-app', repoUrl, { sourceConfig: { integration_id: integrationId } }),
    );
    expect(created.status).toBe(201);
    const { id: deploymentId, latest_revision_id: revisionId } = created.body;
    await pipeline.waitForRevision(deploymentId, revisionId, settled);
    const revision = (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;
    expect({ status: revision.status, message: revision.status_message }).toEqual({ status: 'DEPLOYED', message: null });
    expect(gitServer.requests.some((request) => request.authorized)).toBe(true);

    const deployment = (await pipeline.api('GET', `/v2/deployments/${deploymentId}`)).body;
    const events = await readSse(
      await fetch(`${deployment.url}/runs/stream`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Api-Key': pipeline.apiKey },
        body: JSON.stringify({ assistant_id: 'agent', input: { input: 'private' }, stream_mode: 'updates' }),
      }),
    );
    expect(events).toContainEqual({ event: 'updates', data: { respond: { echo: 'echo: private' } } });

    const said = await everythingSaidAbout(deploymentId, revisionId);
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
    expect(said).not.toContain(token);
    expect(said).not.toContain(basic);
    const buildDir = path.join(pipeline.dataDir, 'builds', revisionId);
    expect(fs.existsSync(path.join(buildDir, 'src', '.git', 'config'))).toBe(true);
    expect(filesMentioning(buildDir, token)).toEqual([]);
    expect(filesMentioning(buildDir, basic)).toEqual([]);
  });

  it('a signed push webhook builds each build_on_push deployment following the pushed ref at the pushed commit; a redelivery creates nothing; a bad signature is 401', async () => {
    const secret = 'webhook-secret-for-tests';
    expect((await pipeline.api('PATCH', '/v2/auth/providers/codehost', { webhook_secret: secret })).body.has_webhook_secret).toBe(
      true,
    );
    const providerId = (await pipeline.api('GET', '/v2/auth/providers/codehost')).body.id as string;
    const create = async (name: string, buildOnPush: boolean, repoRef = 'main') => {
      const created = await pipeline.api(
        'POST',
        '/v2/deployments',
        codehostDeployment(name, repoUrl, {
          sourceConfig: { integration_id: integrationId, build_on_push: buildOnPush },
          repoRef,
        }),
      );
      expect(created.status).toBe(201);
      return { id: created.body.id as string, revisionId: created.body.latest_revision_id as string };
    };
    const follower = await create('push-follower', true);
    const manual = await create('push-manual', false);
    await pipeline.waitForRevision(follower.id, follower.revisionId, settled);
    await pipeline.waitForRevision(manual.id, manual.revisionId, settled);
    const revisionsOf = async (id: string) =>
      (await pipeline.api('GET', `/v2/deployments/${id}/revisions`)).body.resources.length;

    // A developer pushes to main on the code host.
    const bare = path.join(pipeline.dataDir, 'code-host', 'private-app.git');
    const work = createGitRepo(null);
    work.git('fetch', '-q', bare, 'main');
    work.git('reset', '-q', '--hard', 'FETCH_HEAD');
    work.commit('answer with pushed:', {
      'src/graph.js': fs.readFileSync(path.join(work.dir, 'src', 'graph.js'), 'utf8').replace('`echo: ${', '`pushed: ${'),
    });
    const sha = work.head();
    work.git('push', '-q', bare, 'HEAD:main');

    const payload = JSON.stringify({
      ref: 'refs/heads/main',
      after: sha,
      repository: { clone_url: repoUrl, html_url: repoUrl.replace(/\.git$/, '') },
      installation: { id: 4242 },
    });
    const deliver = (signedWith: string, delivery: string) =>
      fetch(`${pipeline.stack.apiUrl}/v1/integrations/codehost/webhook/${providerId}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-GitHub-Event': 'push',
          'X-GitHub-Delivery': delivery,
          'X-Hub-Signature-256': `sha256=${crypto.createHmac('sha256', signedWith).update(payload).digest('hex')}`,
        },
        body: payload,
      });
    const forged = await deliver('not-the-secret', 'delivery-0');
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ detail: 'Invalid webhook signature.' });

    const delivered = await deliver(secret, 'delivery-1');
    expect(delivered.status).toBe(202);
    const outcome = (await delivered.json()) as { revisions: Array<{ deployment_id: string; revision_id: string }> };
    expect(outcome.revisions.map((revision) => revision.deployment_id)).toEqual([follower.id]);
    const built = outcome.revisions[0]!.revision_id;
    await pipeline.waitForRevision(follower.id, built, settled);
    const revision = (await pipeline.api('GET', `/v2/deployments/${follower.id}/revisions/${built}`)).body;
    expect({ status: revision.status, sha: revision.source_revision_config.repo_commit_sha }).toEqual({
      status: 'DEPLOYED',
      sha,
    });
    const deployment = (await pipeline.api('GET', `/v2/deployments/${follower.id}`)).body;
    const events = await readSse(
      await fetch(`${deployment.url}/runs/stream`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Api-Key': pipeline.apiKey },
        body: JSON.stringify({ assistant_id: 'agent', input: { input: 'hook' }, stream_mode: 'updates' }),
      }),
    );
    expect(events).toContainEqual({ event: 'updates', data: { respond: { echo: 'pushed: hook' } } });

    const redelivered = await deliver(secret, 'delivery-1');
    expect(redelivered.status).toBe(202);
    expect(await redelivered.json()).toMatchObject({ duplicate: true, revisions: [] });
    expect(await revisionsOf(follower.id)).toBe(2);
    expect(await revisionsOf(manual.id)).toBe(1);
  }, 300_000);

  it('fails at the build stage with a message naming the repository when the integration is missing', async () => {
    const created = await pipeline.api('POST', '/v2/deployments', codehostDeployment('private-app-no-token', repoUrl));
    expect(created.status).toBe(201);
    const { id: deploymentId, latest_revision_id: revisionId } = created.body;
    await pipeline.waitForRevision(deploymentId, revisionId, settled);
    const revision = (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;
    expect(revision.status).toBe('BUILD_FAILED');
    expect(revision.status_message).toContain(repoUrl);
    expect(gitServer.requests.some((request) => !request.authorized)).toBe(true);
    expect(await everythingSaidAbout(deploymentId, revisionId)).not.toContain(token);
  });

  it('fails the build stage at once, asking to authorize again, when the integration token expired and cannot be refreshed', async () => {
    await pipeline.stack
      .db('oauth_tokens')
      .whereIn('id', pipeline.stack.db('codehost_integrations').select('token_id').where({ id: integrationId }))
      .update({ refresh_token_encrypted: null, expires_at: new Date(Date.now() - 1000) });
    const created = await pipeline.api(
      'POST',
      '/v2/deployments',
      codehostDeployment('private-app-expired', repoUrl, { sourceConfig: { integration_id: integrationId } }),
    );
    expect(created.status).toBe(201);
    const { id: deploymentId, latest_revision_id: revisionId } = created.body;
    await pipeline.waitForRevision(deploymentId, revisionId, settled, 60_000);
    const revision = (await pipeline.api('GET', `/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;
    expect(revision.status).toBe('BUILD_FAILED');
    expect(revision.status_message).toMatch(/authorize the app again/);
    expect(revision.status_message).toContain(integrationId);
  });
});
