/**
 * The image push seam of the Kubernetes path: a revision's image, built in (or pulled into) graphx's engine store
 * exactly as for the container runner, is copied to the configured registry with skopeo (Debian's, the same tool
 * family as the engine: it reads containers-storage directly, so nothing is exported to a file first), and the
 * revision then runs it by the digest the registry computed, never by a tag. An `external_docker` revision's image is
 * copied registry to registry the same way (a loopback registry, any port, is plain HTTP, as for the engine).
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

/** Credentials for reading an image from another registry (an `external_docker` revision's `image_uri`). */
export interface SourceAuth {
  registry: string;
  username: string;
  password: string;
}

/** Pushes a local image to the cluster's registry, or copies a remote one there. */
export interface ImagePusher {
  push(localRef: string, name: string, tag: string, onLine?: (line: string) => void): Promise<PushedImage>;
  /** Copies `imageUri` (any registry) to `<repository>/<name>:<tag>`, reading it with `auth` when given. */
  copyRemote(
    imageUri: string,
    name: string,
    tag: string,
    options?: { auth?: SourceAuth; onLine?: (line: string) => void },
  ): Promise<PushedImage>;
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

  push(localRef: string, name: string, tag: string, onLine: (line: string) => void = () => {}): Promise<PushedImage> {
    return this.copy(`containers-storage:${localRef}`, localRef, name, tag, [], onLine);
  }

  async copyRemote(
    imageUri: string,
    name: string,
    tag: string,
    options: { auth?: SourceAuth; onLine?: (line: string) => void } = {},
  ): Promise<PushedImage> {
    if (!/^[A-Za-z0-9][A-Za-z0-9._:/@-]*$/.test(imageUri)) throw new ImagePushError(`Not an image reference: ${imageUri}`);
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-source-auth-'));
    try {
      const args: string[] = [];
      if (options.auth) {
        // A file, not --src-creds: a password on the command line is visible to every user of the machine.
        const file = path.join(work, 'auth.json');
        const encoded = Buffer.from(`${options.auth.username}:${options.auth.password}`).toString('base64');
        fs.writeFileSync(file, JSON.stringify({ auths: { [options.auth.registry]: { auth: encoded } } }), { mode: 0o600 });
        args.push('--src-authfile', file);
      } else if (this.options.authFile) {
        args.push('--src-authfile', this.options.authFile);
      }
      // As the engine's configuration says (engineConfig.ts): a registry on loopback, any port, is plain HTTP.
      if (isLoopback(imageUri)) args.push('--src-tls-verify=false');
      return await this.copy(`docker://${imageUri}`, imageUri, name, tag, args, options.onLine ?? (() => {}));
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }

  private async copy(
    source: string,
    shown: string,
    name: string,
    tag: string,
    sourceArgs: string[],
    onLine: (line: string) => void,
  ): Promise<PushedImage> {
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
      ...sourceArgs,
      source,
      `docker://${target}:${tag}`,
    ];
    onLine(`Pushing ${shown} to ${target}:${tag}`);
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
            reject(new ImagePushError(`Pushing ${shown} to ${target} failed: ${detail || error.message}`));
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

/** A registry on this machine (`127.0.0.1:5000/…`, `localhost/…`). */
function isLoopback(imageUri: string): boolean {
  const host = imageUri.split('/')[0] ?? '';
  return imageUri.includes('/') && /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/.test(host);
}
