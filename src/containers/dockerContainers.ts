/**
 * graphx's container spec in the Docker Engine API's words, and back. Every container drops all capabilities and sets
 * `no-new-privileges` here, so no caller can forget them.
 */
import type Docker from 'dockerode';
import type { ContainerInfo, ContainerSpec, ContainerState } from './engine';
import type { ContainerUlimit } from './engineConfig';

const MB = 1024 * 1024;

/** The create request for `spec`; `ulimits` are sent with every container (see DockerEngine's constructor). */
export function containerCreateOptions(spec: ContainerSpec, ulimits: ContainerUlimit[]): Docker.ContainerCreateOptions {
  const port = spec.publish ? `${spec.publish.containerPort}/tcp` : null;
  return {
    name: spec.name,
    Image: spec.image,
    Cmd: spec.cmd,
    Env: Object.entries(spec.env ?? {}).map(([name, value]) => `${name}=${value}`),
    Labels: spec.labels ?? {},
    User: spec.user,
    WorkingDir: spec.workingDir,
    ExposedPorts: port ? { [port]: {} } : undefined,
    HostConfig: {
      PortBindings: port
        ? { [port]: [{ HostIp: '127.0.0.1', HostPort: spec.publish!.hostPort ? String(spec.publish!.hostPort) : '' }] }
        : undefined,
      Binds: (spec.mounts ?? []).map((m) => `${m.source}:${m.target}${m.readOnly ? ':ro' : ''}`),
      ReadonlyRootfs: spec.readOnlyRootfs ?? false,
      Tmpfs: spec.tmpfs,
      Memory: spec.memoryMb ? spec.memoryMb * MB : undefined,
      // Without swap equal to memory, podman lets a container page out past its limit instead of being killed.
      MemorySwap: spec.memoryMb ? spec.memoryMb * MB : undefined,
      MemoryReservation: spec.memoryReservationMb ? spec.memoryReservationMb * MB : undefined,
      NanoCpus: spec.cpus ? Math.round(spec.cpus * 1e9) : undefined,
      CpuShares: spec.cpuShares,
      PidsLimit: spec.pidsLimit,
      NetworkMode: spec.network,
      Ulimits: ulimits.map((limit) => ({ Name: limit.name, Soft: limit.soft, Hard: limit.hard })),
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
    },
  };
}

/** What graphx reads of an inspected container: its state, labels and the host port it was published on. */
export function containerInfoOf(info: Docker.ContainerInspectInfo): ContainerInfo {
  const ports = Object.values(info.NetworkSettings?.Ports ?? {}).flat();
  const hostPort = ports.find((binding) => binding?.HostPort)?.HostPort;
  return {
    id: info.Id,
    name: info.Name.replace(/^\//, ''),
    image: info.Config.Image,
    state: info.State.Status as ContainerState,
    exitCode: info.State.Running ? null : info.State.ExitCode,
    oomKilled: info.State.OOMKilled,
    labels: info.Config.Labels ?? {},
    hostPort: hostPort ? Number(hostPort) : null,
  };
}
