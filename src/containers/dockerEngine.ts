/**
 * ContainerEngine over the Docker Engine API (dockerode) on a unix socket: Docker Engine on a user's host, or
 * `podman system service` (podmanService.ts) here. Every container it runs drops all capabilities and sets
 * `no-new-privileges` (dockerContainers.ts), so no caller can forget them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { containerCreateOptions, containerInfoOf } from './dockerContainers';
import { engineError, isNoSuchContainer, messageOf, statusOf } from './dockerErrors';
import { demultiplex, lastLogLines, timestampedLogLines } from './dockerLogs';
import { LineAssembler } from '@graphx/kit/lineAssembler';
import {
  ContainerEngineError,
  type BuildImageOptions,
  type ContainerEngine,
  type ContainerInfo,
  type ContainerLogLine,
  type ContainerSpec,
  type ImageInfo,
  type NetworkAddresses,
  type RegistryAuth,
} from './engine';
import type { ContainerUlimit } from './engineConfig';

interface ProgressEvent {
  stream?: string;
  status?: string;
  error?: string;
  errorDetail?: { message?: string };
}

export class DockerEngine implements ContainerEngine {
  private readonly docker: Docker;

  /**
   * `ulimits` are sent with every container although graphx's containers.conf holds the same values: podman 4.3's
   * compat API applies the configured defaults with soft and hard swapped, and runc then refuses to start.
   */
  constructor(
    readonly socketPath: string,
    private readonly ulimits: ContainerUlimit[] = [],
  ) {
    this.docker = new Docker({ socketPath });
  }

  async ping(): Promise<void> {
    try {
      await this.docker.ping();
    } catch (error) {
      throw new ContainerEngineError(`no container engine answers on ${this.socketPath}: ${messageOf(error)}`);
    }
  }

  async buildHost(): Promise<{ podman: boolean; cgroupDriver: string | null }> {
    let info: { CgroupDriver?: string };
    try {
      info = (await this.docker.info()) as { CgroupDriver?: string };
    } catch (error) {
      throw engineError('info', error);
    }
    return { podman: await this.isPodman(), cgroupDriver: info.CgroupDriver ?? null };
  }

  async inspectImage(ref: string): Promise<ImageInfo | null> {
    try {
      const info = await this.docker.getImage(ref).inspect();
      return { id: info.Id, repoDigests: info.RepoDigests ?? [], labels: info.Config?.Labels ?? {} };
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw engineError(`inspect image ${ref}`, error);
    }
  }

  async buildImage(options: BuildImageOptions): Promise<ImageInfo> {
    const entries = options.include ?? fs.readdirSync(options.contextDir);
    const memory = options.memoryMb ? options.memoryMb * 1024 * 1024 : undefined;
    let stream: NodeJS.ReadableStream;
    try {
      stream = await this.docker.buildImage({ context: options.contextDir, src: entries }, {
        t: options.tag,
        dockerfile: options.dockerfile ?? 'Dockerfile',
        labels: options.labels ?? {},
        rm: true,
        forcerm: true,
        abortSignal: options.signal,
        memory,
        memswap: memory,
        cgroupparent: options.cgroupParent,
        ...(options.network ? await this.buildNetwork(options.network) : {}),
      } as Docker.ImageBuildOptions);
    } catch (error) {
      throw engineError(`build ${options.tag}`, error);
    }
    const lines = new LineAssembler((line) => line.trim() && options.onOutput?.(line));
    await this.follow(stream, `build ${options.tag}`, (event) => lines.push(event.stream ?? ''));
    lines.end();
    return this.requireImage(options.tag);
  }

  /**
   * The build parameters for a RUN network. Docker Engine takes `networkmode` by name. Podman's compat API (4.x)
   * ignores that name: its RUN steps share the host's network namespace unless `nsoptions` asks for a private one,
   * and then `networkmode` is buildah's policy number (1: no network configured, loopback only; unset: the bridge).
   */
  private async buildNetwork(network: NonNullable<BuildImageOptions['network']>): Promise<Record<string, string>> {
    const podman = await this.isPodman();
    if (typeof network === 'object') {
      if (!podman) throw new ContainerEngineError('only podman builds can join a network namespace by path');
      return { nsoptions: JSON.stringify([{ Name: 'network', Host: false, Path: network.namespacePath }]) };
    }
    if (!podman) return { networkmode: network === 'none' ? 'none' : 'default' };
    const nsoptions = JSON.stringify([{ Name: 'network', Host: false }]);
    return network === 'none' ? { nsoptions, networkmode: '1' } : { nsoptions };
  }

  private podman: Promise<boolean> | null = null;

  /** True when podman serves the API (its version names the "Podman Engine" component). */
  private isPodman(): Promise<boolean> {
    this.podman ??= this.docker.version().then(
      (version) => (version.Components ?? []).some((component) => /podman/i.test(component.Name)),
      (error: unknown) => {
        this.podman = null;
        throw engineError('version', error);
      },
    );
    return this.podman;
  }

  /**
   * `FROM scratch` + `ADD rootfs.tar /` through the build endpoint: the Engine API's own import (`fromSrc`) is not
   * served the same by every engine (podman's compat API drops the connection), a build is.
   */
  async importImage(tarPath: string, ref: string, changes: string[] = []): Promise<ImageInfo> {
    const context = fs.mkdtempSync(path.join(os.tmpdir(), 'graphx-import-'));
    try {
      fs.linkSync(tarPath, path.join(context, 'rootfs.tar'));
    } catch {
      fs.copyFileSync(tarPath, path.join(context, 'rootfs.tar'));
    }
    try {
      fs.writeFileSync(path.join(context, 'Dockerfile'), ['FROM scratch', 'ADD rootfs.tar /', ...changes, ''].join('\n'));
      return await this.buildImage({ contextDir: context, tag: ref });
    } finally {
      fs.rmSync(context, { recursive: true, force: true });
    }
  }

  async pullImage(ref: string, auth?: RegistryAuth): Promise<ImageInfo> {
    let stream: NodeJS.ReadableStream;
    try {
      stream = await this.docker.pull(ref, auth ? { authconfig: auth } : {});
    } catch (error) {
      throw engineError(`pull ${ref}`, error);
    }
    await this.follow(stream, `pull ${ref}`);
    return this.requireImage(ref);
  }

  async tagImage(ref: string, newRef: string): Promise<void> {
    const slash = newRef.lastIndexOf('/');
    const colon = newRef.lastIndexOf(':');
    const [repo, tag] = colon > slash ? [newRef.slice(0, colon), newRef.slice(colon + 1)] : [newRef, 'latest'];
    try {
      await this.docker.getImage(ref).tag({ repo, tag });
    } catch (error) {
      throw engineError(`tag ${ref} as ${newRef}`, error);
    }
  }

  async removeImage(ref: string): Promise<void> {
    try {
      await this.docker.getImage(ref).remove();
    } catch (error) {
      if (statusOf(error) !== 404) throw engineError(`remove image ${ref}`, error);
    }
  }

  async ensureIsolatedNetwork(name: string, labels: Record<string, string> = {}): Promise<NetworkAddresses> {
    const existing = await this.networkAddresses(name);
    if (existing) return existing;
    // Docker Engine isolates user-defined bridges from each other by itself; podman (netavark) does on `isolate`.
    const options: Record<string, string> = (await this.isPodman()) ? { isolate: 'true' } : {};
    try {
      await this.docker.createNetwork({ Name: name, Driver: 'bridge', Options: options, Labels: labels, CheckDuplicate: true });
    } catch (error) {
      if (statusOf(error) !== 409) throw engineError(`create network ${name}`, error);
    }
    const created = await this.networkAddresses(name);
    if (!created) throw engineError(`create network ${name}`, new Error('the network is missing right after its creation'));
    return created;
  }

  async removeNetwork(name: string): Promise<NetworkAddresses | null> {
    const addresses = await this.networkAddresses(name);
    if (!addresses) return null;
    try {
      await this.docker.getNetwork(name).remove();
    } catch (error) {
      if (statusOf(error) !== 404) throw engineError(`remove network ${name}`, error);
    }
    return addresses;
  }

  /**
   * The network's subnets and gateways; null when it does not exist. On podman through its own API: podman 4.3's
   * Docker-compatible network inspect drops the network's `isolate` option as a side effect (seen here: `isolate` set
   * after create, gone after one compat inspect), and the next container on it would join unisolated.
   */
  private async networkAddresses(name: string): Promise<NetworkAddresses | null> {
    if (await this.isPodman()) {
      const info = await this.libpodNetwork(name);
      if (!info) return null;
      const subnets = info.subnets ?? [];
      return {
        subnets: subnets.map((entry) => entry.subnet).filter((value): value is string => Boolean(value)),
        gateways: subnets.map((entry) => entry.gateway).filter((value): value is string => Boolean(value)),
      };
    }
    try {
      const info = (await this.docker.getNetwork(name).inspect()) as {
        IPAM?: { Config?: Array<{ Subnet?: string; Gateway?: string }> | null };
      };
      const config = info.IPAM?.Config ?? [];
      return {
        subnets: config.map((entry) => entry.Subnet).filter((value): value is string => Boolean(value)),
        gateways: config.map((entry) => entry.Gateway).filter((value): value is string => Boolean(value)),
      };
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw engineError(`inspect network ${name}`, error);
    }
  }

  private libpodNetwork(name: string): Promise<{ subnets?: Array<{ subnet?: string; gateway?: string }> } | null> {
    return new Promise((resolve, reject) => {
      this.docker.modem.dial(
        {
          path: `/v4.0.0/libpod/networks/${encodeURIComponent(name)}/json`,
          method: 'GET',
          statusCodes: { 200: true, 404: 'no such network', 500: 'server error' },
        },
        (error: unknown, data: unknown) => {
          if (!error) return resolve(data as { subnets?: Array<{ subnet?: string; gateway?: string }> });
          if (statusOf(error) === 404) return resolve(null);
          reject(engineError(`inspect network ${name}`, error));
        },
      );
    });
  }

  async runContainer(spec: ContainerSpec): Promise<ContainerInfo> {
    try {
      const container = await this.docker.createContainer(containerCreateOptions(spec, this.ulimits));
      await container.start();
      return (await this.inspectContainer(container.id))!;
    } catch (error) {
      throw engineError(`run container ${spec.name} from ${spec.image}`, error);
    }
  }

  async inspectContainer(idOrName: string): Promise<ContainerInfo | null> {
    try {
      return containerInfoOf(await this.docker.getContainer(idOrName).inspect());
    } catch (error) {
      if (isNoSuchContainer(error)) return null;
      throw engineError(`inspect container ${idOrName}`, error);
    }
  }

  async listContainers(labels: Record<string, string>): Promise<ContainerInfo[]> {
    const found = await this.docker.listContainers({
      all: true,
      filters: { label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) },
    });
    const infos = await Promise.all(found.map((summary) => this.inspectContainer(summary.Id)));
    return infos.filter((info): info is ContainerInfo => info !== null);
  }

  async stopContainer(idOrName: string, graceSeconds: number): Promise<void> {
    try {
      await this.docker.getContainer(idOrName).stop({ t: graceSeconds });
    } catch (error) {
      // 304: already stopped; isNoSuchContainer: gone.
      if (statusOf(error) !== 304 && !isNoSuchContainer(error)) throw engineError(`stop ${idOrName}`, error);
    }
  }

  async removeContainer(idOrName: string): Promise<void> {
    try {
      await this.docker.getContainer(idOrName).remove({ force: true, v: true });
    } catch (error) {
      if (!isNoSuchContainer(error)) throw engineError(`remove ${idOrName}`, error);
    }
  }

  async waitContainer(idOrName: string): Promise<number> {
    const result = (await this.docker.getContainer(idOrName).wait()) as { StatusCode: number };
    return result.StatusCode;
  }

  /**
   * Reads the whole log and keeps the last lines here: podman 4.3's `tail` joins a partial line (Node writes
   * "v20\n" in two parts) with the next one.
   */
  async containerLogs(idOrName: string, tail: number): Promise<string> {
    const raw = (await this.docker
      .getContainer(idOrName)
      .logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
    return lastLogLines(demultiplex(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw))), tail);
  }

  /** Both streams' lines since `sinceSecond`, with the second each was written (see timestampedLogLines). */
  async containerLogLines(idOrName: string, sinceSecond: number): Promise<ContainerLogLine[]> {
    let raw: Buffer;
    try {
      const answer = (await this.docker
        .getContainer(idOrName)
        .logs({ stdout: true, stderr: true, timestamps: true, follow: false, since: sinceSecond })) as unknown;
      raw = Buffer.isBuffer(answer) ? answer : Buffer.from(String(answer));
    } catch (error) {
      if (statusOf(error) === 404) return [];
      throw engineError(`logs of ${idOrName}`, error);
    }
    return timestampedLogLines(raw);
  }

  private async requireImage(ref: string): Promise<ImageInfo> {
    const image = await this.inspectImage(ref);
    if (!image) throw new ContainerEngineError(`image ${ref} is missing after it was created`);
    return image;
  }

  /** Reads a progress stream to its end; an `error` event rejects with the engine's own message. */
  private follow(stream: NodeJS.ReadableStream, what: string, onEvent?: (event: ProgressEvent) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.docker.modem.followProgress(
        stream,
        (error: Error | null) => (error ? reject(engineError(what, error)) : resolve()),
        (event: ProgressEvent) => {
          if (event.error) {
            reject(new ContainerEngineError(`${what}: ${event.errorDetail?.message ?? event.error}`.trim()));
            return;
          }
          onEvent?.(event);
        },
      );
    });
  }
}
