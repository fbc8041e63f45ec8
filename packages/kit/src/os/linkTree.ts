/** Build contexts are assembled from hard links, not copies: a context of node_modules costs no disk and little time. */
import fs from 'node:fs';
import path from 'node:path';

/**
 * Hard links (copies across file systems) of a tree; symbolic links stay links (their targets are not followed).
 * `keep` decides, per directory entry name, what goes in.
 */
export function linkTree(source: string, target: string, keep: (name: string) => boolean = () => true): void {
  const stat = fs.lstatSync(source);
  if (stat.isSymbolicLink()) {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.symlinkSync(fs.readlinkSync(source), target);
  } else if (stat.isDirectory()) {
    fs.mkdirSync(target, { recursive: true });
    for (const name of fs.readdirSync(source)) {
      if (keep(name)) linkTree(path.join(source, name), path.join(target, name), keep);
    }
  } else if (stat.isFile()) {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    try {
      fs.linkSync(source, target);
    } catch {
      fs.copyFileSync(source, target);
    }
  }
}
