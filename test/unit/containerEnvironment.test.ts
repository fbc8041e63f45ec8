import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runtimeDockerfile } from '../../src/containers/runtimeImage';
import { containerEnvironment, instanceEnvironment, semiSpaceMb, type ContainerIdentity } from '../../src/pipeline/runtimeEnv';
import type { RevisionSpec } from '../../src/pipeline/revisionSpec';

const spec = (resourceSpec: Record<string, number> = {}) =>
  ({
    revisionId: 'r',
    deploymentId: 'd',
    tenantId: 't',
    graphxConfigPath: '/app/graphx.json',
    sourceConfig: { resource_spec: resourceSpec },
    secrets: [],
  }) as unknown as RevisionSpec;
const identity = (memoryMb: number, builtImage: boolean): ContainerIdentity => ({
  port: 8000,
  databaseUri: 'postgresql://x@localhost/x?host=/run/graphx',
  controlPlaneSocket: '/run/graphx/api.sock',
  serviceToken: 'gxs_x',
  memoryMb,
  builtImage,
});

describe("a container instance's Node options", () => {
  it("gives an instance of a built image the host's young generation (16 MB semi-spaces under the default 1 GB), and less under small limits", () => {
    expect(containerEnvironment(spec(), identity(1024, true)).NODE_OPTIONS).toBe('--max-semi-space-size=16');
    expect(containerEnvironment(spec({ memory_limit_mb: 256 }), identity(256, true)).NODE_OPTIONS).toBe(
      '--max-semi-space-size=4 --max-old-space-size=256',
    );
    expect(semiSpaceMb(64)).toBe(1);
  });

  it("leaves a pulled image's Node alone unless a memory limit is set", () => {
    expect(containerEnvironment(spec(), identity(1024, false)).NODE_OPTIONS).toBeUndefined();
    expect(containerEnvironment(spec({ memory_limit_mb: 512 }), identity(512, false)).NODE_OPTIONS).toBe(
      '--max-old-space-size=512',
    );
  });

  it('is accepted by Node in NODE_OPTIONS (an option Node refuses there would stop every instance from starting)', () => {
    const { NODE_OPTIONS } = containerEnvironment(spec({ memory_limit_mb: 512 }), identity(512, true));
    const output = execFileSync(process.execPath, ['-p', "require('v8').getHeapSpaceStatistics().length > 0"], {
      env: { PATH: process.env.PATH, NODE_OPTIONS },
      encoding: 'utf8',
    });
    expect(output.trim()).toBe('true');
  });
});

describe('the malloc arenas of an instance', () => {
  const processIdentity = (dir: string) => ({
    port: 8123,
    databaseUri: 'postgres://x@127.0.0.1/x',
    configFile: path.join(dir, 'graphx.json'),
    repoRoot: dir,
    controlPlaneUrl: 'http://127.0.0.1:9',
    serviceToken: 'gxs_x',
  });
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-arenas-'));
    fs.writeFileSync(path.join(dir, 'graphx.json'), JSON.stringify({ graphs: { agent: './agent.js:graph' } }));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('are two for a process instance and in the runtime image, and a deployment secret of the same name wins', () => {
    expect(instanceEnvironment(spec(), processIdentity(dir)).MALLOC_ARENA_MAX).toBe('2');
    const withSecret = { ...spec(), secrets: [{ name: 'MALLOC_ARENA_MAX', value: '4' }] } as RevisionSpec;
    expect(instanceEnvironment(withSecret, processIdentity(dir)).MALLOC_ARENA_MAX).toBe('4');
    expect(runtimeDockerfile('localhost/base:1')).toMatch(/^ENV MALLOC_ARENA_MAX=2$/m);
  });
});
