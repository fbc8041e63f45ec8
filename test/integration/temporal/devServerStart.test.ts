/** Starting the Temporal dev server on a port another process holds fails at once with the server's own words. */
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { findFreePort } from '@graphx/kit/net/ports';
import { startTemporalDevServer } from '../../../src/temporal/devServer';

describe('the Temporal dev server start', () => {
  it('fails within seconds, not after the readiness timeout, when its port is taken', async () => {
    const port = await findFreePort();
    // The holder drops whatever connects, so nothing it accepted keeps the test process alive.
    const holder = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    const logFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-temporal-')), 'temporal.log');
    const started = Date.now();
    try {
      await expect(
        startTemporalDevServer({ dbFile: null, port, uiPort: null, namespace: 'default', logFile, supervise: false }),
      ).rejects.toThrow(/exited|address already in use/);
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  }, 150_000);
});
