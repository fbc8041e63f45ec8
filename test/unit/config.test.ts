import { loadConfig } from '../../src/config';
import { ConfigError } from '@graphx/kit/errors';

describe('configuration', () => {
  it('applies the documented defaults of the embedded stack', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      gatewayPort: 8123,
      temporalUiPort: 8233,
      databaseUrl: null,
      temporalAddress: null,
      deploymentMode: 'cloud',
      allowFileRepos: false,
      unusedAfterDays: 28,
      // Containers where an engine answers, else processes: decided at start (src/targets/choose.ts).
      runner: 'auto',
      buildMemoryMb: 2048,
      buildRegistryHosts: ['registry.npmjs.org', 'registry.yarnpkg.com', 'repo.yarnpkg.com'],
    });
    expect(config.dataDir).toMatch(/\/data$/);
  });

  it.each([
    ['PORT', 'eighty', /PORT="eighty": "PORT" must be a number/],
    ['GRAPHX_DEPLOYMENT_MODE', 'hybrid', /GRAPHX_DEPLOYMENT_MODE="hybrid": .*must be one of \[cloud, self_hosted\]/],
    ['TEMPORAL_ADDRESS', 'http://temporal', /TEMPORAL_ADDRESS=.*host:port/],
    ['DATABASE_URL', 'mysql://x/y', /DATABASE_URL=.*postgres/],
    ['GRAPHX_SECRET_KEY', 'short', /GRAPHX_SECRET_KEY=.*64 hex digits/],
    ['GRAPHX_WORKER_QUEUES', 'control,deploy', /GRAPHX_WORKER_QUEUES=.*comma list of control and build/],
    ['GRAPHX_RUNNER', 'docker', /GRAPHX_RUNNER="docker": .*must be one of \[container, process, auto\]/],
    ['GRAPHX_BUILD_MEMORY_MB', '16', /GRAPHX_BUILD_MEMORY_MB="16": .*greater than or equal to 64/],
    ['GRAPHX_BUILD_REGISTRY_HOSTS', 'https://registry.npmjs.org/', /GRAPHX_BUILD_REGISTRY_HOSTS=.*comma list of host names/],
  ])('stops start-up on a bad %s with a message naming it and what it accepts', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('reads 1/0 flags', () => {
    expect(loadConfig({ GRAPHX_ALLOW_FILE_REPOS: '1' }).allowFileRepos).toBe(true);
    expect(loadConfig({ GRAPHX_ALLOW_FILE_REPOS: '0' }).allowFileRepos).toBe(false);
  });

  it('allows private networks by default only in self_hosted mode, and either way when told', () => {
    expect(loadConfig({}).allowPrivateNetwork).toBe(false);
    expect(loadConfig({ GRAPHX_DEPLOYMENT_MODE: 'self_hosted' }).allowPrivateNetwork).toBe(true);
    expect(loadConfig({ GRAPHX_DEPLOYMENT_MODE: 'self_hosted', GRAPHX_ALLOW_PRIVATE_NETWORK: '0' }).allowPrivateNetwork).toBe(
      false,
    );
    expect(loadConfig({ GRAPHX_ALLOW_PRIVATE_NETWORK: '1' }).allowPrivateNetwork).toBe(true);
  });
});
