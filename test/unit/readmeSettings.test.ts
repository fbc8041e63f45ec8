/** README's table of settings names every variable the configuration schema reads, and nothing else. */
import fs from 'node:fs';
import path from 'node:path';
import { configVariables } from '../../src/config';

test("README's settings table lists exactly the variables src/config reads", () => {
  const readme = fs.readFileSync(path.resolve(__dirname, '..', '..', 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('| variable'));
  const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
  const documented = rows.map((row) => /^\| `([A-Z_]+)`/.exec(row)?.[1]).filter(Boolean);
  expect([...documented].sort()).toEqual(configVariables());
});
