/**
 * heldOpening: a protocol run's opening events leave with its first event (one write, not two), yet never wait longer
 * than the hold for a graph slow to start, and a graph that fails still shows its opening first.
 */
import { heldOpening } from '../../src/execution/heldOpening';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every item with the ms since `start` at which it was read. */
async function timed<T>(stream: AsyncGenerator<T>): Promise<Array<[T, number]>> {
  const start = performance.now();
  const seen: Array<[T, number]> = [];
  for await (const item of stream) seen.push([item, performance.now() - start]);
  return seen;
}

describe('heldOpening', () => {
  test('the opening is read only once the first event is there, then everything in order', async () => {
    async function* rest() {
      await sleep(30);
      yield 'first';
      yield 'second';
    }
    const seen = await timed(heldOpening(['metadata', 'running'], rest(), 5_000));
    expect(seen.map(([item]) => item)).toEqual(['metadata', 'running', 'first', 'second']);
    // Held until the first event came (~30 ms), far short of the 5 s hold.
    expect(seen[0]![1]).toBeGreaterThanOrEqual(25);
    expect(seen[0]![1]).toBeLessThan(2_000);
  });

  test('a first event slower than the hold: the opening leaves when the hold ends', async () => {
    const order: string[] = [];
    async function* rest() {
      await sleep(1_500);
      order.push('first produced');
      yield 'first';
    }
    for await (const item of heldOpening(['running'], rest(), 20)) order.push(item);
    expect(order).toEqual(['running', 'first produced', 'first']);
  });

  test('a stream that fails before its first event: the opening, then the failure', async () => {
    async function* rest(): AsyncGenerator<string> {
      await sleep(5);
      throw new Error('graph failed to load');
    }
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const item of heldOpening(['running'], rest(), 5_000)) seen.push(item);
      })(),
    ).rejects.toThrow('graph failed to load');
    expect(seen).toEqual(['running']);
  });

  test('a consumer that stops early lets the stream clean up', async () => {
    let cleaned = false;
    async function* rest() {
      try {
        yield 'first';
        yield 'second';
      } finally {
        cleaned = true;
      }
    }
    for await (const item of heldOpening(['running'], rest(), 5_000)) if (item === 'first') break;
    expect(cleaned).toBe(true);
  });
});
