/**
 * resource_spec numbers as Kubernetes quantities, in the canonical form the API server stores (so a second apply of
 * the same revision compares equal and a test can read the value back as written).
 */

/** Cores → `2`, `500m`, `1500m`. */
export function cpuQuantity(cores: number): string {
  const milli = Math.round(cores * 1000);
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

/** MiB → `512Mi`, `1Gi`. */
export function memoryQuantity(mebibytes: number): string {
  return mebibytes % 1024 === 0 ? `${mebibytes / 1024}Gi` : `${mebibytes}Mi`;
}

/** GiB → `10Gi`, `1Ti`. */
export function storageQuantity(gibibytes: number): string {
  return gibibytes % 1024 === 0 ? `${gibibytes / 1024}Ti` : `${gibibytes}Gi`;
}

/** `requests` and `limits` of a container from four optional numbers; empty parts are left out. */
export function containerResources(values: {
  cpu?: number | null;
  cpuLimit?: number | null;
  memoryMb?: number | null;
  memoryLimitMb?: number | null;
}): { requests?: Record<string, string>; limits?: Record<string, string> } {
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  if (values.cpu) requests.cpu = cpuQuantity(values.cpu);
  if (values.memoryMb) requests.memory = memoryQuantity(values.memoryMb);
  if (values.cpuLimit) limits.cpu = cpuQuantity(values.cpuLimit);
  if (values.memoryLimitMb) limits.memory = memoryQuantity(values.memoryLimitMb);
  return {
    ...(Object.keys(requests).length > 0 ? { requests } : {}),
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
  };
}
