/** README's "Layout" block names every folder under src/, so a new folder cannot go undocumented. */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/** The folders under src/ that the Layout block of `readme` names (`src/<name>/` at the start of a line). */
function layoutFolders(readme: string): Set<string> {
  const section = readme.split(/^## Layout\s*$/m)[1];
  if (!section) return new Set();
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return new Set([...block.matchAll(/^src\/([\w.-]+)\//gm)].map((match) => match[1] as string));
}

/** Folders under src/ the block does not name. */
function missingFolders(readme: string, folders: string[]): string[] {
  const named = layoutFolders(readme);
  return folders.filter((folder) => !named.has(folder));
}

describe('README layout block', () => {
  it('reports a folder under src/ that the block leaves out (the check itself can fail)', () => {
    const readme = '# x\n\n## Layout\n\n```\nsrc/api/   the API\nsrc/db/    the database\n```\n';
    expect(missingFolders(readme, ['api', 'db', 'http'])).toEqual(['http']);
  });

  it('names every folder under src/', () => {
    const folders = fs
      .readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.length).toBeGreaterThan(0);
    expect(missingFolders(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'), folders)).toEqual([]);
  });
});
