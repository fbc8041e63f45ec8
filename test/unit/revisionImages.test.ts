import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dockerfileLines } from '@graphx/contract/graphxConfig';
import { registryAuthFor, registryHost } from '../../src/containers/registryAuth';
import { buildEnvFile, revisionDockerfiles, stageBuildContext } from '../../src/containers/revisionBuildContext';

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

describe('the Python layer of a uv project (graphx.json "source": {"kind": "uv"})', () => {
  const python = {
    version: '3.11',
    dependencies: [],
    pipConfigFile: null,
    installer: 'pip' as const,
    source: { kind: 'uv' as const, root: '../..', package: "agent'; touch /pwned; '" },
  };

  it('stages only uv.lock and the pyproject.toml files of the workspace, never its code', () => {
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-uv-stage-'));
    const files = {
      'pyproject.toml': '[project]\nname = "root"\n',
      'uv.lock': 'version = 1\n',
      'apps/agent/graphx.json': '{}',
      'apps/agent/pyproject.toml': '[project]\nname = "agent"\n',
      'apps/agent/src/agent/graph.py': 'graph = None\n',
      'node_modules/x/pyproject.toml': '',
    };
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(repo, name)), { recursive: true });
      fs.writeFileSync(path.join(repo, name), text);
    }
    const context = stageBuildContext(repo, path.join(repo, '..', `${path.basename(repo)}-context`), 'apps/agent', python);
    try {
      const staged = execFileSync('find', ['.', '-type', 'f'], {
        cwd: path.join(context, 'python', 'uv-project'),
        encoding: 'utf8',
      });
      expect(staged.trim().split('\n').sort()).toEqual(['./apps/agent/pyproject.toml', './pyproject.toml', './uv.lock']);
    } finally {
      fs.rmSync(context, { recursive: true, force: true });
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });

  it("runs the helper with uv from its pinned wheel, graphx.json's folder in the project and the member quoted for sh", () => {
    const text = revisionDockerfiles({ ...base, python }).dependencies!;
    expect(text).toContain('-m pip install --require-hashes --no-deps -r /home/graphx/python-inputs/uv-requirements.txt');
    expect(text).toContain("'--config-dir' '/home/graphx/python-inputs/uv-project/apps/agent'");
    const script = JSON.parse(
      text
        .split('\n')
        .find((line) => line.includes('uv_project.py'))!
        .replace(/^RUN --mount=\S+ /, ''),
    );
    const argv = execFileSync('sh', ['-c', `printf '%s\\n' ${script[2].match(/--package' (.*?) &&/)[1]}`], { encoding: 'utf8' });
    expect(argv).toBe("agent'; touch /pwned; '\n");
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
