import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ContainerEngineError } from '../../../src/containers/engine';
import { describeWithEngine, ensureBusyboxImage, startTestEngine, type TestEngine } from '../../support/containerEngine';

jest.setTimeout(60_000);

describeWithEngine('Docker Engine API client against real podman', () => {
  let test: TestEngine;
  let image: string;
  const created: string[] = [];
  const run = `t${process.pid}-${Date.now().toString(36)}`;

  beforeAll(async () => {
    test = await startTestEngine();
    image = await ensureBusyboxImage(test.engine);
  });

  afterAll(async () => {
    for (const name of created) await test.engine.removeContainer(name);
    await test.engine.removeImage(`localhost/graphx-engine-test:${run}`);
    await test.service.stop();
  });

  async function runToEnd(name: string, script: string, extra: Record<string, unknown> = {}): Promise<string> {
    created.push(name);
    const container = await test.engine.runContainer({ name, image, cmd: ['sh', '-c', script], ...extra });
    await test.engine.waitContainer(container.id);
    return test.engine.containerLogs(container.id, 200);
  }

  it('runs containers unprivileged: no capabilities, no-new-privileges, read-only root, writable tmpfs, bounded ulimits', async () => {
    const output = await runToEnd(
      `${run}-hardened`,
      'id -u; grep -E "CapEff|NoNewPrivs" /proc/self/status; grep -E "open files|processes" /proc/self/limits; touch /x 2>&1; touch /tmp/y && echo tmp-writable',
      { user: '10001', readOnlyRootfs: true, tmpfs: { '/tmp': 'rw,size=16m' } },
    );
    expect(output).toMatch(/^10001$/m);
    expect(output).toMatch(/CapEff:\s+0000000000000000/);
    expect(output).toMatch(/NoNewPrivs:\s+1/);
    expect(output).toMatch(/Max open files\s+1024\s+4096/);
    expect(output).toMatch(/Max processes\s+1024\s+2048/);
    expect(output).toMatch(/Read-only file system/);
    expect(output).toMatch(/tmp-writable/);
  });

  it('publishes a container port on 127.0.0.1 only and finds the container again by its labels', async () => {
    const name = `${run}-web`;
    created.push(name);
    const container = await test.engine.runContainer({
      name,
      image,
      cmd: ['sh', '-c', 'mkdir -p /tmp/www && echo served > /tmp/www/ok && httpd -f -p 8000 -h /tmp/www'],
      labels: { 'graphx.test': run },
      publish: { containerPort: 8000, hostPort: 0 },
    });
    expect(container.state).toBe('running');
    expect(container.hostPort).toEqual(expect.any(Number));
    const body = await retryGet(`http://127.0.0.1:${container.hostPort}/ok`);
    expect(body.trim()).toBe('served');
    // Bound to loopback: the host's other addresses do not answer on that port.
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;
    if (external) await expect(get(`http://${external}:${container.hostPort}/ok`)).rejects.toThrow();

    const listed = await test.engine.listContainers({ 'graphx.test': run });
    expect(listed.map((info) => info.name)).toEqual([name]);
    await test.engine.stopContainer(name, 1);
    expect((await test.engine.inspectContainer(name))?.state).toBe('exited');
    await test.engine.stopContainer(name, 1);
    await test.engine.removeContainer(name);
    await test.engine.removeContainer(name);
    expect(await test.engine.inspectContainer(name)).toBeNull();
  });

  it('kills a container that allocates past its memory limit (exit 137, its output never comes)', async () => {
    const name = `${run}-oom`;
    created.push(name);
    const container = await test.engine.runContainer({
      name,
      image,
      // A command substitution holds its whole output in the shell's memory.
      cmd: ['sh', '-c', 'x=$(head -c 100000000 /dev/zero | tr "\\0" a); echo survived ${#x}'],
      memoryMb: 32,
    });
    await test.engine.waitContainer(container.id);
    const logs = await test.engine.containerLogs(container.id, 10);
    const info = await test.engine.inspectContainer(container.id);
    expect(logs).not.toMatch(/survived/);
    expect(info?.exitCode).toBe(137);
  });

  it('stops a fork bomb at the pids limit', async () => {
    const output = await runToEnd(`${run}-pids`, 'for i in $(seq 1 100); do sleep 5 & done 2>&1 | head -1; echo done', {
      pidsLimit: 20,
    });
    expect(output).toMatch(/can't fork|Resource temporarily unavailable/i);
  });

  it('builds an image from a context directory, reporting build output and labels, without host paths', async () => {
    const context = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-engine-ctx-'));
    try {
      fs.writeFileSync(path.join(context, 'greeting.txt'), 'hello from the context\n');
      fs.writeFileSync(
        path.join(context, 'Dockerfile'),
        [
          `FROM ${image}`,
          'COPY greeting.txt /app/greeting.txt',
          'RUN echo built-step; cat /app/greeting.txt; ls /work 2>&1; true',
          'USER 10001',
          '',
        ].join('\n'),
      );
      const lines: string[] = [];
      const built = await test.engine.buildImage({
        contextDir: context,
        tag: `localhost/graphx-engine-test:${run}`,
        labels: { 'graphx.content-hash': 'abc123' },
        onOutput: (line) => lines.push(line),
      });
      expect(built.labels['graphx.content-hash']).toBe('abc123');
      expect(lines.join('\n')).toMatch(/built-step/);
      expect(lines.join('\n')).toMatch(/hello from the context/);
      // The host's /work (this repository) is not visible to the build.
      expect(lines.join('\n')).toMatch(/No such file or directory/);
      const output = await runToEnd(`${run}-built`, 'id -u; cat /app/greeting.txt', { image: built.id });
      expect(output).toMatch(/^10001$/m);
    } finally {
      fs.rmSync(context, { recursive: true, force: true });
    }
  });

  it('rejects a failing build with the engine message and a missing image with a message naming it', async () => {
    const context = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-engine-ctx-'));
    try {
      fs.writeFileSync(path.join(context, 'Dockerfile'), `FROM ${image}\nRUN exit 3\n`);
      await expect(
        test.engine.buildImage({ contextDir: context, tag: `localhost/graphx-engine-test:${run}-bad` }),
      ).rejects.toThrow(ContainerEngineError);
    } finally {
      fs.rmSync(context, { recursive: true, force: true });
    }
    expect(await test.engine.inspectImage('localhost/graphx-no-such-image:1')).toBeNull();
    await expect(test.engine.runContainer({ name: `${run}-missing`, image: 'localhost/graphx-no-such-image:1' })).rejects.toThrow(
      /graphx-no-such-image/,
    );
  });
});

function get(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { timeout: 2000 }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve(body));
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}

async function retryGet(url: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await get(url);
    } catch (error) {
      if (attempt > 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
