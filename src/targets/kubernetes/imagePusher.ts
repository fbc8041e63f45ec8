/**
 * The image push seam of the Kubernetes path: a revision's image, built in (or pulled into) graphx's engine store
 * exactly as for the container runner, is copied to the configured registry with skopeo (Debian's, the same tool
 * family as the engine: it reads containers-storage directly, so nothing is exported to a file first), and the
 * revision then runs it by the digest the registry computed, never by a tag.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface PushedImage {
  /** `<repository>@sha256:…`: what pods pull. */
  ref: string;
  digest: string;
}

/** Pushes a local image to the cluster's registry. */
export interface ImagePusher {
  push(localRef: string, name: string, tag: string, onLine?: (line: string) => void): Promise<PushedImage>;
}

export interface SkopeoPusherOptions {
  /** `host[:port]/path`: images go to `<repository>/<name>:<tag>`. */
  repository: string;
  /** containers-auth.json with credentials for the registry; null: none (or the user's default). */
  authFile: string | null;
  tlsVerify: boolean;
  /** The environment that points containers-storage at graphx's engine store (EngineConfigFiles.env). */
  storageEnv: Record<string, string>;
  /** Seconds a push may take (a large image on a slow link), then it fails. */
  timeoutSeconds?: number;
}

export class ImagePushError extends Error {
  override name = 'ImagePushError';
}

export class SkopeoImagePusher implements ImagePusher {
  constructor(private readonly options: SkopeoPusherOptions) {}

  async push(localRef: string, name: string, tag: string, onLine: (line: string) => void = () => {}): Promise<PushedImage> {
    const { repository, authFile, tlsVerify, storageEnv } = this.options;
    if (!/^[a-z0-9][a-z0-9._/-]*$/.test(name) || !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) {
      throw new ImagePushError(`Not an image name and tag: ${name}:${tag}`);
    }
    const target = `${repository.replace(/\/+$/, '')}/${name}`;
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-push-'));
    const digestFile = path.join(work, 'digest');
    const args = [
      'copy',
      '--retry-times',
      '2',
      `--dest-tls-verify=${tlsVerify}`,
      '--digestfile',
      digestFile,
      ...(authFile ? ['--dest-authfile', authFile] : []),
      `containers-storage:${localRef}`,
      `docker://${target}:${tag}`,
    ];
    onLine(`Pushing ${localRef} to ${target}:${tag}`);
    try {
      await new Promise<void>((resolve, reject) => {
        execFile(
          'skopeo',
          args,
          {
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir(), ...storageEnv },
            timeout: (this.options.timeoutSeconds ?? 1800) * 1000,
            maxBuffer: 4 * 1024 * 1024,
          },
          (error, _stdout, stderr) => {
            if (!error) return resolve();
            const detail = String(stderr).trim().split('\n').slice(-5).join('\n');
            reject(new ImagePushError(`Pushing ${localRef} to ${target} failed: ${detail || error.message}`));
          },
        );
      });
      const digest = fs.readFileSync(digestFile, 'utf8').trim();
      if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new ImagePushError(`skopeo wrote no digest for ${target}:${tag}`);
      onLine(`Pushed ${target}@${digest}`);
      return { ref: `${target}@${digest}`, digest };
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }
}
