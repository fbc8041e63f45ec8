/**
 * How the Docker Engine API's failures become ContainerEngineErrors: dockerode rejects with the HTTP status in
 * `statusCode` and the engine's own message in `json.message`, which is what a person needs to read.
 */
import { ContainerEngineError } from './engine';

/** The engine's HTTP status of a failed request, or null when the request never got an answer. */
export function statusOf(error: unknown): number | null {
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' ? status : null;
}

/**
 * Whether the engine said the container does not exist. Podman answers 404, except for a container removed while the
 * request ran (listed, then gone before its inspect): then it answers 500 "… does not exist in database: no such
 * container", which means the same.
 */
export function isNoSuchContainer(error: unknown): boolean {
  return statusOf(error) === 404 || /no such container/i.test(messageOf(error));
}

/** The engine's message when it sent one, else the error's own. */
export function messageOf(error: unknown): string {
  const json = (error as { json?: { message?: string } }).json;
  return (json?.message ?? (error as Error).message ?? String(error)).trim();
}

/** A ContainerEngineError saying what was attempted and the engine's answer (an engine error passes unchanged). */
export function engineError(what: string, error: unknown): ContainerEngineError {
  if (error instanceof ContainerEngineError) return error;
  return new ContainerEngineError(`${what}: ${messageOf(error)}`, statusOf(error));
}
