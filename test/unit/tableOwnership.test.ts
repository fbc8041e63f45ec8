/**
 * Only src/db/repositories/ writes the `deployments` and `revisions` tables (issue 9): every state change goes
 * through a guarded repository operation. This scans the source tree for knex writes and raw SQL writes to them.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const SCANNED = ['src', 'activities', 'workflows', 'bin', 'scripts'];
const OWNERS = [path.join('src', 'db', 'repositories') + path.sep, path.join('src', 'db', 'migrations') + path.sep];
const TABLE_CALL = /\w+\(\s*['"`](deployments|revisions)(\s+as\s+\w+)?['"`]\s*\)/g;
const KNEX_WRITE = /\.(update|insert|del|delete|increment|decrement|truncate|upsert|onConflict)\(/;
const RAW_WRITE = /\b(update|insert\s+into|delete\s+from|truncate)\s+"?(deployments|revisions)\b/i;

/** The writes to the two tables in `text`, as short excerpts. */
function tableWrites(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(TABLE_CALL)) {
    const end = text.indexOf(';', match.index);
    const statement = text.slice(match.index, end === -1 ? undefined : end);
    if (KNEX_WRITE.test(statement)) found.push(statement.slice(0, 80));
  }
  const raw = RAW_WRITE.exec(text);
  if (raw) found.push(raw[0]);
  return found;
}

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|js)$/.test(entry.name) ? [full] : [];
  });
}

describe('ownership of the deployments and revisions tables', () => {
  it('finds knex and raw SQL writes to the two tables (the check itself can fail)', () => {
    expect(tableWrites("await trx('deployments').where({ id }).update({ url });")).toHaveLength(1);
    expect(tableWrites("await db('revisions as r')\n  .where({ id })\n  .del();")).toHaveLength(1);
    expect(tableWrites("await db.raw('UPDATE revisions SET status = ?', [s]);")).toHaveLength(1);
    expect(tableWrites("const row = await db('deployments').where({ id }).first();")).toHaveLength(0);
  });

  it('has no writes to deployments or revisions outside src/db/repositories', () => {
    const offenders = SCANNED.flatMap((dir) => sourceFiles(path.join(ROOT, dir)))
      .map((file) => path.relative(ROOT, file))
      .filter((file) => !OWNERS.some((owner) => file.startsWith(owner)))
      .flatMap((file) => tableWrites(fs.readFileSync(path.join(ROOT, file), 'utf8')).map((write) => `${file}: ${write}`));
    expect(offenders).toEqual([]);
  });
});
