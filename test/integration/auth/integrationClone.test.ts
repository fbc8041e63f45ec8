import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { gitCredentialEnv } from '../../../src/auth/gitCredentialEnv';
import { getIntegrationCloneToken } from '../../../src/auth/integrationCredentials';
import { InputError } from '@graphx/kit/errors';
import { makeDataDir } from '../../support/env';
import { startGitHttpServer, type GitHttpServer } from '../../support/gitHttpServer';
import { pathOf, startAuthStack, type AuthStack } from './authStack';

const run = promisify(execFile);

describe('clone tokens of a code-host integration', () => {
  let stack: AuthStack;
  let tenantId: string;
  let integrationId: string;
  let workDir: string;

  /** git isolated from the machine's own configuration: no global or system config, never a prompt. */
  const gitEnv = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH as string,
    HOME: workDir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    ...extra,
  });
  const git = (args: string[], cwd: string, extra: Record<string, string> = {}) => run('git', args, { cwd, env: gitEnv(extra) });

  const expireToken = () =>
    stack
      .db('oauth_tokens')
      .whereIn('id', stack.db('codehost_integrations').select('token_id').where({ id: integrationId }))
      .update({ expires_at: new Date(Date.now() - 1000) });
  const tokenRow = () =>
    stack
      .db('oauth_tokens')
      .whereIn('id', stack.db('codehost_integrations').select('token_id').where({ id: integrationId }))
      .first();

  beforeAll(async () => {
    workDir = makeDataDir('auth-clone');
    stack = await startAuthStack();
    const tenant = await stack.tenant('clone');
    tenantId = tenant.tenantId;
    expect((await stack.createProvider(tenant.apiKey, 'codehost', 'client_secret_post')).status).toBe(200);
    const { callback } = await stack.authorize(tenant.apiKey, 'codehost', ['repo', 'offline_access']);
    const setup = new URL(callback.toString().replace('/callback/', '/setup/'));
    setup.searchParams.set('setup_action', 'install');
    setup.searchParams.set('installation_id', '9001');
    const installed = await stack.api(pathOf(setup));
    expect(installed.status).toBe(200);
    integrationId = installed.body.integration_id;
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('hands out the stored token while it is fresh, without asking the provider', async () => {
    const before = await tokenRow();
    const token = await getIntegrationCloneToken(stack, tenantId, integrationId);
    expect(token).toBe(stack.secretBox.decrypt(before.access_token_encrypted));
    expect((await tokenRow()).updated_at).toEqual(before.updated_at);
  });

  it('refreshes an expired token with the refresh token first, and stores the new pair encrypted', async () => {
    const before = await tokenRow();
    await expireToken();
    const token = await getIntegrationCloneToken(stack, tenantId, integrationId);
    const after = await tokenRow();
    expect(token).not.toBe(stack.secretBox.decrypt(before.access_token_encrypted));
    expect(await stack.oauth.isActiveToken(token)).toBe(true);
    expect(after.expires_at.getTime()).toBeGreaterThan(Date.now());
    expect(after.refresh_token_encrypted).toMatch(/^v1:/);
    expect(stack.secretBox.decrypt(after.refresh_token_encrypted)).not.toBe(
      stack.secretBox.decrypt(before.refresh_token_encrypted),
    );
    expect(JSON.stringify(after)).not.toContain(token);
  });

  it('lets concurrent clones of an expired token share one refresh (the server rotates refresh tokens)', async () => {
    await expireToken();
    const tokens = await Promise.all([1, 2, 3].map(() => getIntegrationCloneToken(stack, tenantId, integrationId)));
    expect(new Set(tokens).size).toBe(1);
    expect(await stack.oauth.isActiveToken(tokens[0] as string)).toBe(true);
  });

  it('refuses an expired token that has no refresh token with an InputError that says to authorize again', async () => {
    const saved = await tokenRow();
    await stack
      .db('oauth_tokens')
      .where({ id: saved.id })
      .update({ refresh_token_encrypted: null, expires_at: new Date(Date.now() - 1000) });
    try {
      await expect(getIntegrationCloneToken(stack, tenantId, integrationId)).rejects.toThrow(InputError);
      await expect(getIntegrationCloneToken(stack, tenantId, integrationId)).rejects.toThrow(/authorize the app again/);
    } finally {
      await stack
        .db('oauth_tokens')
        .where({ id: saved.id })
        .update({ refresh_token_encrypted: saved.refresh_token_encrypted, expires_at: saved.expires_at });
    }
  });

  describe('through a real git smart-HTTP server that requires the token', () => {
    let gitServer: GitHttpServer;
    let token: string;

    beforeAll(async () => {
      token = await getIntegrationCloneToken(stack, tenantId, integrationId);
      const reposDir = path.join(workDir, 'repos');
      const seed = path.join(workDir, 'seed');
      fs.mkdirSync(seed, { recursive: true });
      fs.writeFileSync(path.join(seed, 'graphx.json'), '{"graphs": {}}\n');
      await git(['init', '-q', '-b', 'main'], seed);
      await git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'init'], seed);
      await git(['add', '.'], seed);
      await git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'app'], seed);
      fs.mkdirSync(reposDir, { recursive: true });
      await git(['clone', '-q', '--bare', seed, path.join(reposDir, 'private-app.git')], workDir);
      gitServer = await startGitHttpServer({ reposDir, requiredToken: token });
    });
    afterAll(async () => {
      await gitServer.stop();
    });

    it('clones with the token passed through GIT_CONFIG_* variables, and the token lands in no file of the clone', async () => {
      const target = path.join(workDir, 'build-ok', 'src');
      await git(['clone', '-q', `${gitServer.url}/private-app.git`, target], workDir, gitCredentialEnv(token));
      expect(fs.readFileSync(path.join(target, 'graphx.json'), 'utf8')).toContain('graphs');
      expect(gitServer.requests.length).toBeGreaterThan(0);
      expect(gitServer.requests.every((request) => request.authorized)).toBe(true);

      const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
      const leaks = filesUnder(path.join(workDir, 'build-ok')).filter((file) => {
        const content = fs.readFileSync(file);
        return content.includes(token) || content.includes(basic);
      });
      expect(leaks).toEqual([]);
      const gitConfig = fs.readFileSync(path.join(target, '.git', 'config'), 'utf8');
      expect(gitConfig).not.toMatch(/extraheader|x-access-token/i);
      expect(gitConfig).toContain(`url = ${gitServer.url}/private-app.git`);
    });

    it('fails to clone without the token, and with a wrong one, instead of prompting', async () => {
      const url = `${gitServer.url}/private-app.git`;
      await expect(git(['clone', '-q', url, path.join(workDir, 'build-none')], workDir)).rejects.toMatchObject({
        stderr: expect.stringMatching(/could not read Username|Authentication failed/),
      });
      await expect(
        git(['clone', '-q', url, path.join(workDir, 'build-wrong')], workDir, gitCredentialEnv('wrong-token')),
      ).rejects.toMatchObject({
        stderr: expect.stringMatching(/could not read Username|Authentication failed|401/),
      });
      expect(fs.existsSync(path.join(workDir, 'build-none', '.git'))).toBe(false);
    });
  });
});

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : entry.isFile() ? [full] : [];
  });
}
