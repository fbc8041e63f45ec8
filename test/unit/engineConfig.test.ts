import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clampLimits, writeEngineConfig } from '../../src/containers/engineConfig';
import { demultiplex } from '../../src/containers/dockerLogs';

describe('container engine configuration', () => {
  it('writes runc, cgroupfs and explicit ulimits into its own containers.conf and a storage.conf under its store', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-engine-conf-'));
    try {
      const files = writeEngineConfig({ dir: path.join(dir, 'engine'), storeDir: path.join(dir, 'store') });
      const conf = fs.readFileSync(files.containersConf, 'utf8');
      expect(conf).toMatch(/^runtime = "runc"$/m);
      expect(conf).toMatch(/^cgroup_manager = "cgroupfs"$/m);
      expect(conf).toMatch(/^default_ulimits = \["nofile=\d+:\d+", "nproc=\d+:\d+"\]$/m);
      expect(fs.readFileSync(files.storageConf, 'utf8')).toContain(`graphroot = "${path.join(dir, 'store', 'graph')}"`);
      expect(files.env).toEqual({
        CONTAINERS_CONF: files.containersConf,
        CONTAINERS_STORAGE_CONF: files.storageConf,
        CONTAINERS_REGISTRIES_CONF: files.registriesConf,
      });
      expect(fs.statSync(files.containersConf).mode & 0o077).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps container ulimits below the host hard limit', () => {
    expect(clampLimits([1024, 4096], 20000)).toEqual([1024, 4096]);
    expect(clampLimits([1024, 4096], 2048)).toEqual([1024, 2048]);
    expect(clampLimits([1024, 4096], 512)).toEqual([512, 512]);
    expect(clampLimits([1024, 4096], null)).toEqual([1024, 4096]);
  });

  it('splits framed container logs into their text and leaves unframed text alone', () => {
    const frame = (kind: number, text: string) => {
      const header = Buffer.alloc(8);
      header[0] = kind;
      header.writeUInt32BE(Buffer.byteLength(text), 4);
      return Buffer.concat([header, Buffer.from(text)]);
    };
    expect(demultiplex(Buffer.concat([frame(1, 'out\n'), frame(2, 'err\n')]))).toBe('out\nerr\n');
    expect(demultiplex(Buffer.from('plain text log\n'))).toBe('plain text log\n');
  });
});
