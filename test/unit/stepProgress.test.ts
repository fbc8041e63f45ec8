/**
 * A revision's build log survives a database hiccup: a batch of lines the database refused is written by a later
 * flush, in order, and only a database that stays away loses lines (bounded memory). The database here is a
 * stand-in recording `batchInsert` calls (the one call StepProgress makes); the real insert is covered by the
 * pipeline tests.
 */
import type { Db } from '../../src/db/knex';
import { StepProgress } from '../../activities/support/progress';
import { logger } from '@graphx/kit/logger';

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

  it('keeps trying the last lines at close while the database comes back (a restart of a few seconds)', async () => {
    const { db, written } = flakyDb(5);
    const progress = new StepProgress(db, 'revision-3');
    progress.line('Applied 4 objects to namespace graphx-demo');
    progress.line('Serving at http://127.0.0.1:8080');
    await progress.close([10, 10, 10, 10, 10]);
    expect(written).toEqual(['Applied 4 objects to namespace graphx-demo', 'Serving at http://127.0.0.1:8080']);
  });

  it('says how many lines it dropped when the database stays away past the close', async () => {
    const { db, written } = flakyDb(Number.POSITIVE_INFINITY);
    const warn = jest.spyOn(logger, 'warn');
    try {
      const progress = new StepProgress(db, 'revision-4');
      progress.line('Pushed image 127.0.0.1:5000/demo@sha256:00');
      progress.line('Serving at http://127.0.0.1:8080');
      await progress.close([10, 10]);
      expect(written).toEqual([]);
      const dropped = warn.mock.calls.filter(([fields]) => (fields as { dropped?: boolean }).dropped === true);
      expect(dropped).toHaveLength(1);
      expect(dropped[0]![0]).toMatchObject({ revisionId: 'revision-4', lines: 2 });
    } finally {
      warn.mockRestore();
    }
  });
});
