/**
 * Each table the control plane writes has one owner (issue 9, issue 19): every state change goes through a guarded
 * repository or store operation. This scans the source tree for knex and raw SQL writes and checks that only a
 * table's owners write it, and that every table the migrations create has owners listed here (a new table must be
 * given one).
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const SCANNED = ['src', 'activities', 'workflows', 'bin', 'scripts'];
const MIGRATIONS = path.join('src', 'db', 'migrations');
const repository = (name: string) => path.join('src', 'db', 'repositories', `${name}.ts`);

/** Table → the files that may write it. */
const OWNERS: Record<string, string[]> = {
  api_keys: [repository('apiKeys')],
  tenants: [repository('apiKeys')],
  app_logs: [repository('instances')],
  local_instances: [repository('instances')],
  service_tokens: [repository('instances')],
  codehost_integrations: [repository('integrations')],
  codehost_push_deliveries: [repository('pushDeliveries')],
  deployments: [repository('deployments'), repository('pipelineState'), repository('tracing')],
  revisions: [repository('revisions'), repository('pipelineState')],
  revision_logs: [repository('revisions')],
  oauth_attempts: [repository('oauthAttempts')],
  oauth_providers: [repository('oauthProviders')],
  oauth_tokens: [repository('oauthTokens')],
  // The outbox is written in the caller's transaction and drained by its relay: the module is its repository.
  pipeline_outbox: [path.join('src', 'pipeline', 'outbox.ts')],
  tracing_projects: [repository('tracing')],
  tracing_runs: [repository('tracing')],
};

const KNEX_WRITE = /\.(update|insert|del|delete|increment|decrement|truncate|upsert|onConflict|merge)\(/;

/** The tables `text` writes, each with a short excerpt of the write. */
function tableWrites(text: string, tables: string[]): Array<{ table: string; excerpt: string }> {
  const names = tables.join('|');
  const found: Array<{ table: string; excerpt: string }> = [];
  const tableCall = new RegExp(`\\w+\\(\\s*['"\`](${names})(\\s+as\\s+\\w+)?['"\`]\\s*\\)`, 'g');
  for (const match of text.matchAll(tableCall)) {
    // The statement runs to the first `;` outside a callback (a `.where((w) => { … })` may hold its own).
    let depth = 0;
    let end = match.index;
    while (end < text.length && !(text[end] === ';' && depth === 0)) {
      if (text[end] === '{' || text[end] === '(') depth += 1;
      if (text[end] === '}' || text[end] === ')') depth -= 1;
      end += 1;
    }
    const statement = text.slice(match.index, end);
    if (KNEX_WRITE.test(statement)) found.push({ table: match[1], excerpt: statement.slice(0, 80) });
  }
  for (const match of text.matchAll(new RegExp(`batchInsert\\(\\s*['"\`](${names})['"\`]`, 'g')))
    found.push({ table: match[1], excerpt: match[0] });
  for (const match of text.matchAll(new RegExp(`\\b(update|insert\\s+into|delete\\s+from|truncate)\\s+"?(${names})\\b`, 'gi')))
    found.push({ table: match[2], excerpt: match[0] });
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

/** Every table a migration creates. */
function migratedTables(): string[] {
  const text = sourceFiles(path.join(ROOT, MIGRATIONS))
    .map((file) => fs.readFileSync(file, 'utf8'))
    .join('\n');
  return [...new Set([...text.matchAll(/createTable\(\s*['"`](\w+)['"`]/g)].map((match) => match[1]))].sort();
}

describe('ownership of the control plane tables', () => {
  it('finds knex and raw SQL writes (the check itself can fail)', () => {
    const tables = ['deployments', 'revisions', 'app_logs'];
    expect(tableWrites("await trx('deployments').where({ id }).update({ url });", tables)).toHaveLength(1);
    expect(tableWrites("await db('revisions as r')\n  .where({ id })\n  .del();", tables)).toHaveLength(1);
    expect(tableWrites("await db.raw('UPDATE revisions SET status = ?', [s]);", tables)).toHaveLength(1);
    expect(tableWrites("await trx.batchInsert('app_logs', entries, 500);", tables)).toHaveLength(1);
    expect(tableWrites("await db('deployments').where((w) => { w.where({ a }); }).delete();", tables)).toHaveLength(1);
    expect(tableWrites("const row = await db('deployments').where({ id }).first();", tables)).toHaveLength(0);
  });

  it('lists owners for every table the migrations create', () => {
    expect(migratedTables()).toEqual(Object.keys(OWNERS).sort());
  });

  it('has no write to a table outside its owners', () => {
    const tables = Object.keys(OWNERS);
    const offenders = SCANNED.flatMap((dir) => sourceFiles(path.join(ROOT, dir)))
      .map((file) => path.relative(ROOT, file))
      .filter((file) => !file.startsWith(MIGRATIONS + path.sep))
      .flatMap((file) =>
        tableWrites(fs.readFileSync(path.join(ROOT, file), 'utf8'), tables)
          .filter(({ table }) => !OWNERS[table].includes(file))
          .map(({ table, excerpt }) => `${file} writes ${table}: ${excerpt}`),
      );
    expect(offenders).toEqual([]);
  });
});
