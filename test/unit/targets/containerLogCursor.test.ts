import type { ContainerLogLine } from '../../../src/containers/engine';
import { newLines } from '../../../src/targets/container/containerInstances';

const line = (second: number, text: string): ContainerLogLine => ({ stream: 'stdout', second, text });

describe('copying container output with a (second, lines of that second) cursor', () => {
  const log = [line(10, 'a'), line(10, 'b'), line(11, 'c'), line(11, 'd'), line(11, 'e')];

  it('copies everything the first time and remembers how many lines of the last second it took', () => {
    expect(newLines(log, 0, 0)).toEqual({ copied: log, second: 11, count: 3 });
  });

  it('skips the lines of the cursor second already copied, even when more arrived in that same second', () => {
    expect(newLines(log.slice(2), 11, 1)).toEqual({ copied: [line(11, 'd'), line(11, 'e')], second: 11, count: 3 });
  });

  it('copies nothing when nothing is new', () => {
    expect(newLines(log.slice(2), 11, 3)).toBeNull();
  });
});
