/**
 * The image push seam (issue 21, point 1): a local image of graphx's engine store goes to the configured registry
 * (Debian's docker-registry on loopback, behind htpasswd) with skopeo, and comes back as a digest reference the
 * registry serves; a registry refusing the credentials fails with its answer.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SkopeoImagePusher } from '../../../src/targets/kubernetes/imagePusher';
import { describeWithEngine, ensureBusyboxImage, startTestEngine, type TestEngine } from '../../support/containerEngine';
import { makeDataDir } from '../../support/env';
import { startRegistry, type TestRegistry } from '../../support/registry';

describeWithEngine('SkopeoImagePusher', () => {
  let engine: TestEngine;
  let registry: TestRegistry;
  let authFile: string;

  beforeAll(async () => {
    engine = await startTestEngine();
    await ensureBusyboxImage(engine.engine);
    registry = await startRegistry(true);
    authFile = path.join(makeDataDir('push-auth'), 'auth.json');
    const { username, password } = registry.credentials!;
    fs.writeFileSync(
      authFile,
      JSON.stringify({ auths: { [registry.host]: { auth: Buffer.from(`${username}:${password}`).toString('base64') } } }),
    );
  }, 180_000);

  afterAll(async () => {
    await registry?.stop();
  });

  it('pushes a local image to the registry and returns the digest reference the registry serves', async () => {
    const pusher = new SkopeoImagePusher({
      repository: `${registry.host}/graphx`,
      authFile,
      tlsVerify: false,
      storageEnv: engine.files.env,
    });
    const lines: string[] = [];
    const pushed = await pusher.push('localhost/graphx-test-busybox:1', 'app-1234', 'rev-abcd', (line) => lines.push(line));
    expect(pushed.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(pushed.ref).toBe(`${registry.host}/graphx/app-1234@${pushed.digest}`);
    const inspected = JSON.parse(
      execFileSync('skopeo', ['inspect', '--tls-verify=false', '--authfile', authFile, `docker://${pushed.ref}`], {
        encoding: 'utf8',
        env: { ...process.env, ...engine.files.env },
      }),
    );
    expect(inspected.Digest).toBe(pushed.digest);
    expect(lines).toEqual([expect.stringMatching(/^Pushing /), `Pushed ${pushed.ref}`]);
  }, 120_000);

  it('fails naming the registry when it refuses the credentials', async () => {
    const pusher = new SkopeoImagePusher({
      repository: `${registry.host}/graphx`,
      authFile: null,
      tlsVerify: false,
      storageEnv: engine.files.env,
    });
    await expect(pusher.push('localhost/graphx-test-busybox:1', 'app-1234', 'denied')).rejects.toThrow(
      new RegExp(
        `Pushing localhost/graphx-test-busybox:1 to ${registry.host}/graphx/app-1234 failed: .*(unauthorized|authentication required)`,
        'i',
      ),
    );
  }, 120_000);
});
