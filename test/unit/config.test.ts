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
      buildRegistryHosts: [
        'registry.npmjs.org',
        'registry.yarnpkg.com',
        'repo.yarnpkg.com',
        'pypi.org',
        'files.pythonhosted.org',
      ],
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
    ['GRAPHX_RUNNER', 'docker', /GRAPHX_RUNNER="docker": .*must be one of \[container, process, kubernetes, auto\]/],
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

  describe('the Kubernetes runner (GRAPHX_RUNNER=kubernetes, or GRAPHX_TARGET=kubernetes as issue 21 names it)', () => {
    it('reads the target settings and the kubeconfig with the rest, and carries them to a worker process', () => {
      const config = loadConfig({
        GRAPHX_TARGET: 'kubernetes',
        KUBECONFIG: '/etc/graphx/kubeconfig',
        GRAPHX_KUBE_NAMESPACE: 'apps',
        GRAPHX_KUBE_REGISTRY: 'registry.example.com/graphx',
      });
      expect(config.runner).toBe('kubernetes');
      expect(config.kube).toMatchObject({
        kubeconfig: '/etc/graphx/kubeconfig',
        defaultNamespace: 'apps',
        registry: { repository: 'registry.example.com/graphx' },
      });
      expect(config.settings).toMatchObject({ GRAPHX_KUBE_NAMESPACE: 'apps', KUBECONFIG: '/etc/graphx/kubeconfig' });
      expect(loadConfig({ GRAPHX_RUNNER: 'kubernetes' }).kube?.defaultNamespace).toBe('graphx-apps');
      expect(loadConfig({ GRAPHX_RUNNER: 'container' }).kube).toBeNull();
    });

    it('stops start-up on a bad Kubernetes setting, and on GRAPHX_TARGET contradicting GRAPHX_RUNNER', () => {
      expect(() => loadConfig({ GRAPHX_RUNNER: 'kubernetes', GRAPHX_KUBE_NAMESPACE: 'Not_A_Label' })).toThrow(
        /Invalid Kubernetes setting: "GRAPHX_KUBE_NAMESPACE"/,
      );
      expect(() => loadConfig({ GRAPHX_TARGET: 'kubernetes', GRAPHX_RUNNER: 'process' })).toThrow(
        /GRAPHX_TARGET=kubernetes contradicts GRAPHX_RUNNER=process/,
      );
      expect(loadConfig({ GRAPHX_TARGET: 'kubernetes', GRAPHX_RUNNER: 'kubernetes' }).runner).toBe('kubernetes');
    });
  });
});
