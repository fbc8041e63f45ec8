/**
 * A revision's build log survives a database hiccup: a batch of lines the database refused is written by a later
 * flush, in order, and only a database that stays away loses lines (bounded memory). The database here is a
 * stand-in recording `batchInsert` calls (the one call StepProgress makes); the real insert is covered by the
 * pipeline tests.
 */
import type { Db } from '../../src/db/knex';
import { StepProgress } from '../../activities/support/progress';

function flakyDb(failures: number) {
  const written: string[] = [];
  let refused = 0;
  const db = {
    batchInsert: async (_table: string, rows: Array<{ message: string }>) => {
      if (refused < failures) {
        refused += 1;
        throw new Error('connection terminated unexpectedly');
      }
      written.push(...rows.map((row) => row.message));
    },
  } as unknown as Db;
  return { db, written };
}

describe('StepProgress (revision log lines)', () => {
  it('writes a batch the database refused with the next flush, before the lines that came after it', async () => {
    const { db, written } = flakyDb(1);
    const progress = new StepProgress(db, 'revision-1');
    progress.line('$ uv export');
    await progress.flush();
    expect(written).toEqual([]);
    progress.line('uv.lock: 40 locked packages for echo-uv');
    await progress.close();
    expect(written).toEqual(['$ uv export', 'uv.lock: 40 locked packages for echo-uv']);
  });

  it('drops a batch only after the database refused it ten times', async () => {
    const { db, written } = flakyDb(10);
    const progress = new StepProgress(db, 'revision-2');
    progress.line('lost');
    for (let flush = 0; flush < 10; flush += 1) await progress.flush();
    progress.line('kept');
    await progress.close();
    expect(written).toEqual(['kept']);
  });
});
