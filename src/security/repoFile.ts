/**
 * Reading a file that tenant code chose (graphx.json, its `env` file) from the control plane. The path is the
 * tenant's: it may point outside the repository (`../../secret-key`), be a symlink to the data dir, a FIFO that blocks
 * a reader forever, or a device that never ends. Only a regular file whose real path is inside the repository, and
 * no larger than a cap, is read.
 */
import fs from 'node:fs';
import path from 'node:path';

/** graphx.json and its env file are small; anything bigger is refused rather than read. */
export const REPO_FILE_MAX_BYTES = 256 * 1024;

export class RepoFileError extends Error {
  override name = 'RepoFileError';
}

/**
 * Reads `file` (absolute, or relative to `repoRoot`) as UTF-8.
 * @throws RepoFileError with a sentence naming the file (relative to the repository) when it is missing, outside the
 *   repository (symlinks resolved), not a regular file, or larger than `maxBytes`.
 */
export function readRepoFile(repoRoot: string, file: string, maxBytes = REPO_FILE_MAX_BYTES): string {
  const shown = path.relative(repoRoot, path.resolve(repoRoot, file)) || file;
  let root: string;
  let real: string;
  try {
    root = fs.realpathSync(repoRoot);
    real = fs.realpathSync(path.resolve(repoRoot, file));
  } catch {
    throw new RepoFileError(`${shown} was not found in the repository.`);
  }
  if (!real.startsWith(root + path.sep)) throw new RepoFileError(`${shown} points outside the repository.`);
  // O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: the path was resolved above.
  let fd: number;
  try {
    fd = fs.openSync(real, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
  } catch (error) {
    throw new RepoFileError(`${shown} cannot be opened: ${(error as NodeJS.ErrnoException).code ?? 'error'}.`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new RepoFileError(`${shown} is not a regular file.`);
    if (stat.size > maxBytes) throw new RepoFileError(`${shown} is larger than ${maxBytes} bytes.`);
    const buffer = Buffer.alloc(stat.size);
    const read = fs.readSync(fd, buffer, 0, stat.size, 0);
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}
