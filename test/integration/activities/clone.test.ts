import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { createActivities } from '../../../activities';
import { buildPaths } from '../../../src/pipeline/revisionSpec';
import { createGitRepo, type GitRepo } from '../../support/gitRepos';
import { activityEnv, addRevision, createDeployment, createTestDeps, type TestDeps } from './pipelineFixtures';

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'apps', 'pipeline-echo');

describe('cloneRepository activity (real git)', () => {
  let deps: TestDeps;
  let repo: GitRepo;
  let first: string;
  let onBranch: string;
  let tagged: string;

  beforeAll(() => {
    deps = createTestDeps();
    repo = createGitRepo(FIXTURE);
    first = repo.head();
    repo.tag('v1.0.0');
    tagged = first;
    repo.branch('feature', true);
    onBranch = repo.commit('feature work', { 'FEATURE.md': 'feature\n' });
    repo.checkout('main');
    repo.commit('main moves on', { 'MAIN.md': 'main\n' });
  });
  afterAll(() => deps.close());

  const clone = async (repoRef: string, repoUrl = repo.url, overrides: Partial<TestDeps> = {}) => {
    const deployment = await createDeployment(deps.db, deps.secretBox, { repoUrl, repoRef });
    const activities = createActivities({ ...deps, ...overrides });
    const result = (await activityEnv().run(activities.cloneRepository, {
      revisionId: deployment.revisionId,
      deploymentId: deployment.deploymentId,
    })) as { repoCommitSha: string | null };
    return { ...deployment, ...result, src: buildPaths(deps.config.dataDir, deployment.revisionId).src };
  };

  it('clones a branch at its tip and records the commit sha on the revision', async () => {
    const result = await clone('feature');
    expect(result.repoCommitSha).toBe(onBranch);
    expect(fs.existsSync(path.join(result.src, 'FEATURE.md'))).toBe(true);
    expect(fs.existsSync(path.join(result.src, 'graphx.json'))).toBe(true);
    const row = await deps.db('revisions').where({ id: result.revisionId }).first('repo_commit_sha');
    expect(row.repo_commit_sha).toBe(onBranch);
    const logs = await deps.db('revision_logs').where({ revision_id: result.revisionId }).pluck('message');
    expect(logs.join('\n')).toMatch(/Checked out/);
  });

  it('clones a tag, a full sha and a short sha', async () => {
    expect((await clone('v1.0.0')).repoCommitSha).toBe(tagged);
    expect((await clone(onBranch)).repoCommitSha).toBe(onBranch);
    const short = await clone(first.slice(0, 8));
    expect(short.repoCommitSha).toBe(first);
    expect(fs.existsSync(path.join(short.src, 'MAIN.md'))).toBe(false);
  });

  it('a second run of the same revision redoes the clone cleanly and pins the commit first recorded', async () => {
    const result = await clone('main');
    fs.writeFileSync(path.join(result.src, 'leftover.txt'), 'from a killed attempt');
    repo.commit('main moves again', { 'LATER.md': 'later\n' });
    const again = (await activityEnv().run(createActivities(deps).cloneRepository, {
      revisionId: result.revisionId,
      deploymentId: result.deploymentId,
    })) as { repoCommitSha: string | null };
    expect(again.repoCommitSha).toBe(result.repoCommitSha);
    expect(fs.existsSync(path.join(result.src, 'leftover.txt'))).toBe(false);
    expect(fs.readdirSync(path.dirname(result.src))).toEqual(['src']);
  });

  it('a missing repository is RepoNotFound and a missing ref is CloneFailed, both naming repo and ref', async () => {
    await expect(clone('main', `file://${path.join(repo.dir, 'nope')}`)).rejects.toMatchObject({
      type: 'RepoNotFound',
      nonRetryable: true,
      message: expect.stringContaining('nope'),
    });
    await expect(clone('no-such-branch')).rejects.toMatchObject({
      type: 'CloneFailed',
      nonRetryable: true,
      message: expect.stringMatching(/no-such-branch.*file:\/\//),
    });
  });

  it('file:// repositories are refused unless GRAPHX_ALLOW_FILE_REPOS is on', async () => {
    const strict = createTestDeps({ GRAPHX_ALLOW_FILE_REPOS: '0' });
    try {
      await expect(clone('main', repo.url, { config: strict.config })).rejects.toMatchObject({
        type: 'CloneFailed',
        message: expect.stringContaining('is not allowed'),
      });
    } finally {
      await strict.close();
    }
  });

  /** A code-host integration of the deployment's tenant holding a fresh (unexpired) token, as the setup URL stores it. */
  async function storeIntegration(tenantId: string, accessToken: string): Promise<string> {
    const providerPk = crypto.randomUUID();
    const tokenId = crypto.randomUUID();
    const integrationId = crypto.randomUUID();
    await deps.db('oauth_providers').insert({
      id: providerPk,
      tenant_id: tenantId,
      provider_id: 'codehost',
      name: 'Code host',
      client_id: 'client',
      auth_url: 'https://codehost.example/authorize',
      token_url: 'https://codehost.example/token',
      token_endpoint_auth_method: 'client_secret_post',
    });
    await deps.db('oauth_tokens').insert({
      id: tokenId,
      tenant_id: tenantId,
      provider_pk: providerPk,
      access_token_encrypted: deps.secretBox.encrypt(accessToken),
      expires_at: new Date(Date.now() + 3_600_000),
    });
    await deps.db('codehost_integrations').insert({
      id: integrationId,
      tenant_id: tenantId,
      provider_pk: providerPk,
      installation_id: 4242,
      token_id: tokenId,
    });
    return integrationId;
  }

  it('an integration token reaches git as a header, never in a URL, file or log', async () => {
    const seen: Array<{ url: string; authorization: string | undefined }> = [];
    const server = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
      res.writeHead(404).end('Repository not found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/org/private.git`;
    try {
      const deployment = await createDeployment(deps.db, deps.secretBox, { repoUrl: url });
      const integrationId = await storeIntegration(deployment.tenantId, 'tok-very-secret-123');
      const revisionId = await addRevision(deps.db, deps.secretBox, deployment.deploymentId, { repoUrl: url, integrationId });
      const failure = await activityEnv()
        .run(createActivities(deps).cloneRepository, { revisionId, deploymentId: deployment.deploymentId })
        .catch((error: unknown) => error);
      expect(failure).toMatchObject({ type: 'RepoNotFound', message: expect.stringContaining('/org/private.git') });
      const expected = `Basic ${Buffer.from('x-access-token:tok-very-secret-123').toString('base64')}`;
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((request) => request.authorization === expected && !request.url.includes('tok-'))).toBe(true);
      const logs = (await deps.db('revision_logs').where({ revision_id: revisionId }).pluck('message')).join('\n');
      expect(logs).not.toContain('tok-very-secret-123');
      expect(logs).not.toContain(expected);
      expect(String((failure as Error).message)).not.toContain(expected);
      const buildRoot = buildPaths(deps.config.dataDir, revisionId).root;
      const onDisk = fs.existsSync(buildRoot) ? grepTree(buildRoot, 'tok-very-secret-123') : [];
      expect(onDisk).toEqual([]);
    } finally {
      server.close();
    }
  });

  it('outside the embedded stack, a repository host that resolves to loopback or link-local is refused before any connection', async () => {
    let connections = 0;
    const listener = net.createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    const strict = createTestDeps({ GRAPHX_ALLOW_FILE_REPOS: '0', GRAPHX_DEPLOYMENT_MODE: 'cloud' });
    try {
      for (const [url, address] of [
        [`https://localhost:${port}/org/app.git`, /127\.0\.0\.1|::1/],
        [`https://127.0.0.1:${port}/org/app.git`, /127\.0\.0\.1/],
        ['https://169.254.169.254/latest/meta-data.git', /169\.254\.169\.254/],
      ] as const) {
        const failure = await clone('main', url, { config: strict.config }).catch((error: unknown) => error);
        expect(failure).toMatchObject({ type: 'CloneFailed', nonRetryable: true });
        expect((failure as Error).message).toMatch(address);
        expect((failure as Error).message).toContain('an address the control plane does not clone from.');
      }
      // A private address is refused in cloud mode, with the setting that allows it named.
      const privateFailure = await clone('main', 'https://10.0.0.1/org/app.git', { config: strict.config }).catch(
        (error: unknown) => error,
      );
      expect((privateFailure as Error).message).toBe(
        'Repository URL https://10.0.0.1/org/app.git resolves to 10.0.0.1, an address the control plane does not clone from (private networks are allowed with GRAPHX_ALLOW_PRIVATE_NETWORK=1).',
      );
      expect(connections).toBe(0);
    } finally {
      listener.close();
      await strict.close();
    }
  });
});

function grepTree(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) hits.push(...grepTree(full, needle));
    else if (fs.readFileSync(full).includes(needle)) hits.push(full);
  }
  return hits;
}
