/**
 * The image contract (docs/internal-contracts.md, "Images"): what every revision image built `FROM graphx-runtime`,
 * and every `image_uri` image a deployment names, can rely on and must provide.
 */

/** uid/gid of the unprivileged user every runtime and revision container runs as. */
export const RUNTIME_UID = 10001;
/** Where the runtime lives in the image (`<RUNTIME_HOME>/bin/graphx.js runtime` is its default command). */
export const RUNTIME_HOME = '/opt/graphx';
/** Where a revision's repository is copied (the runtime image's WORKDIR). */
export const APP_DIR = '/app';
/** The port the image's agent server listens on unless `PORT` says otherwise. */
export const RUNTIME_PORT = 8000;

/**
 * Environment the runtime image sets for every process in it (and the process runner gives an instance): glibc makes
 * up to 8 × cores malloc arenas, one per thread that allocates (Node's libuv and V8 worker threads), and each keeps
 * the pages it touched; two arenas are plenty for a server whose allocations happen on one thread (~2 MB less idle
 * RSS, decisions.md "Two malloc arenas per runtime process"). A deployment secret of the same name wins.
 */
export const RUNTIME_PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** Labels graphx puts on the images it builds. */
export const IMAGE_LABELS = {
  deploymentId: 'graphx.deployment-id',
  revisionId: 'graphx.revision-id',
  /** On graphx-runtime: the hash of everything that went in (a build with the same hash is skipped). */
  contentHash: 'graphx.content-hash',
} as const;
