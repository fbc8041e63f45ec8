/**
 * The process logger writes stdout through a buffered asynchronous destination (docs/decisions.md, "Buffered
 * asynchronous log output"): no request line may be lost when the process exits, nor wait in the buffer while the
 * process is quiet.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, flushLogs } from '@graphx/kit/logger';

const root = path.resolve(__dirname, '..', '..');
const child = path.join(root, 'test', 'fixtures', 'logging', 'requestLogChild.ts');

function requestIds(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { msg: string; request?: { requestId: string } })
    .filter((line) => line.msg === 'request')
    .map((line) => line.request?.requestId ?? '');
}

describe('the buffered request log output', () => {
  it('has written every request line when the process exits right after its requests', async () => {
    // 60 lines of ~250 bytes: several buffers' worth, the last ones still buffered when process.exit is called.
    const process_ = spawn(process.execPath, [path.join(root, 'bin', 'run-ts.js'), child, 'exit', '60'], {
      cwd: root,
      env: { ...process.env, JEST_WORKER_ID: '' },
    });
    let stdout = '';
    process_.stdout.on('data', (chunk) => (stdout += chunk));
    const code = await new Promise((resolve) => process_.once('exit', resolve));
    expect(code).toBe(0);
    expect(requestIds(stdout)).toEqual(Array.from({ length: 60 }, (_, index) => `req-${index}`));
  }, 60_000);

  it('writes a quiet process’s request line within a second, the process still running', async () => {
    const process_ = spawn(process.execPath, [path.join(root, 'bin', 'run-ts.js'), child, 'quiet'], {
      cwd: root,
      env: { ...process.env, JEST_WORKER_ID: '' },
    });
    try {
      let stdout = '';
      process_.stdout.on('data', (chunk) => (stdout += chunk));
      await new Promise<void>((resolve) => process_.stderr.on('data', (chunk) => String(chunk).includes('asked') && resolve()));
      const deadline = Date.now() + 1_000;
      while (requestIds(stdout).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(requestIds(stdout)).toEqual(['req-0']);
      expect(process_.exitCode).toBeNull();
    } finally {
      process_.kill('SIGKILL');
    }
  }, 60_000);

  it('has written every buffered line when flushLogs (the end of a stack stop) resolves', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-log-')), 'out.log');
    const log = createLogger(file, 'info');
    for (let index = 0; index < 3; index++) log.info({ request: { requestId: `stop-${index}` } }, 'request');
    // Three short lines are far below the buffer's size: only the flush writes them (the timer waits 100 ms).
    await flushLogs(log);
    expect(requestIds(fs.readFileSync(file, 'utf8'))).toEqual(['stop-0', 'stop-1', 'stop-2']);
  });
});
