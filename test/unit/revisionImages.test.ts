import { execFileSync } from 'node:child_process';
import { dockerfileLines } from '@graphx/contract/graphxConfig';
import { registryAuthFor, registryHost } from '../../src/containers/registryAuth';
import { buildEnvFile, revisionDockerfiles } from '../../src/containers/revisionBuildContext';

const base = {
  runtimeImage: 'localhost/graphx-runtime:1-abc',
  appSubdir: 'apps/agent',
  configPath: 'apps/agent/graphx.json',
  lockInstall: 'npm ci',
  customInstall: null,
  buildCommand: 'npm run build',
  dockerfileLines: ['RUN echo extra'],
  yarnBerry: false,
  python: null,
};

describe('the generated revision Dockerfile', () => {
  it('installs from the manifests alone before the repository is copied, then builds, then compiles graphs as the unprivileged user', () => {
    const files = revisionDockerfiles({ ...base, dependencyImage: 'localhost/deps:1' });
    const dependencies = files.dependencies!.trim().split('\n');
    expect(dependencies[0]).toBe('FROM localhost/graphx-runtime:1-abc');
    expect(dependencies.findIndex((line) => line.includes('COPY --chown=10001:10001 deps/ /app/'))).toBe(dependencies.length - 2);
    expect(dependencies.at(-1)).toContain('npm ci');
    const lines = files.image.trim().split('\n');
    const at = (text: string) => lines.findIndex((line) => line.includes(text));
    expect(lines[0]).toBe('FROM localhost/deps:1');
    expect(at('npm ci')).toBe(-1);
    expect(at('repo/ /app/')).toBeLessThan(at('npm run build'));
    expect(at('npm run build')).toBeLessThan(at('RUN echo extra'));
    expect(lines.lastIndexOf('USER 10001:10001')).toBeGreaterThan(at('RUN echo extra'));
    expect(lines.at(-1)).toBe('RUN ["node", "/opt/graphx/bin/graphx.js", "runtime-prepare"]');
    expect(dependencies).toContain('ENV GRAPHX_CONFIG_PATH=/app/apps/agent/graphx.json');
    expect(lines).toContain('WORKDIR /app/apps/agent');
  });

  it('runs a custom install_command after the whole repository is copied (it may read any file)', () => {
    const text = revisionDockerfiles({ ...base, lockInstall: null, customInstall: 'make deps' }).dependencies!;
    expect(text).not.toContain('deps/ /app/');
    expect(text.indexOf('repo/ /app/')).toBeLessThan(text.indexOf('make deps'));
  });

  it('puts yarn berry first on PATH for a yarn 2+ repository', () => {
    const files = revisionDockerfiles({ ...base, yarnBerry: true });
    expect(files.dependencies).toContain('ENV PATH=/usr/local/lib/graphx/berry-bin:$PATH');
    // Inherited by the revision image from the dependency image.
    expect(revisionDockerfiles({ ...base, lockInstall: null, yarnBerry: true }).image).toContain(
      'ENV PATH=/usr/local/lib/graphx/berry-bin:$PATH',
    );
  });

  it('writes build secrets so sh reads every value back exactly, quotes included, and skips names sh cannot hold', () => {
    const secrets = [
      { name: 'TOKEN', value: `it's "quoted" $HOME \`x\` \\ end` },
      { name: 'bad-name', value: 'x' },
    ];
    const file = buildEnvFile(secrets);
    expect(file).not.toContain('bad-name');
    const echoed = execFileSync('/bin/sh', ['-c', `${file}\nprintf %s "$TOKEN"`], { encoding: 'utf8', env: {} });
    expect(echoed).toBe(secrets[0]!.value);
  });
});

describe('registry credentials from pull secrets', () => {
  it('finds the registry of an image reference as Docker does', () => {
    expect(registryHost('127.0.0.1:5000/team/agent:1')).toBe('127.0.0.1:5000');
    expect(registryHost('ghcr.io/team/agent')).toBe('ghcr.io');
    expect(registryHost('team/agent:1')).toBe('docker.io');
    expect(registryHost('node:20')).toBe('docker.io');
  });

  it('takes a docker config JSON entry for the image registry (username/password or auth), else user:password', () => {
    const config = JSON.stringify({
      auths: {
        'other.example': { username: 'no', password: 'no' },
        'https://ghcr.io': { auth: Buffer.from('bot:s3cret').toString('base64') },
      },
    });
    expect(registryAuthFor('ghcr.io/team/agent:1', [config])).toEqual({
      username: 'bot',
      password: 's3cret',
      serveraddress: 'ghcr.io',
    });
    expect(registryAuthFor('quay.io/team/agent:1', [config])).toBeUndefined();
    expect(registryAuthFor('quay.io/team/agent:1', [config, 'user:pa:ss'])).toEqual({
      username: 'user',
      password: 'pa:ss',
      serveraddress: 'quay.io',
    });
  });
});

describe('graphx.json dockerfile_lines', () => {
  it('accepts plain build lines and refuses lines that reach other images, shared caches or other networks', () => {
    expect(dockerfileLines({ dockerfile_lines: ['RUN echo hi', 'ENV A=1'] })).toEqual(['RUN echo hi', 'ENV A=1']);
    for (const line of [
      'FROM localhost/graphx-app-other:rev',
      'COPY --from=localhost/graphx-app-other:rev /app /stolen',
      'RUN --mount=type=cache,target=/root/.npm npm ci',
      'RUN --network=host curl 127.0.0.1:7233',
    ]) {
      expect(() => dockerfileLines({ dockerfile_lines: [line] })).toThrow(/may not use FROM/);
    }
    expect(() => dockerfileLines({ dockerfile_lines: 'RUN x' })).toThrow(/must be a list/);
  });
});
