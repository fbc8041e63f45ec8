import { LineAssembler } from '../src/lineAssembler';

const linesOf = (chunks: string[]) => {
  const lines: string[] = [];
  const assembler = new LineAssembler((line) => lines.push(line));
  for (const chunk of chunks) assembler.push(chunk);
  assembler.end();
  return lines;
};

describe('LineAssembler', () => {
  it('joins a line an engine event cut in two (a build log line searched for arrives whole)', () => {
    expect(linesOf(['$ uv export\nuv.lo', 'ck: 12 locked packages for echo-uv\n', 'STEP 8/9'])).toEqual([
      '$ uv export',
      'uv.lock: 12 locked packages for echo-uv',
      'STEP 8/9',
    ]);
  });

  it('splits several lines of one chunk and drops CRLF endings', () => {
    expect(linesOf(['a\r\n\nb\n', 'c\r'])).toEqual(['a', '', 'b', 'c']);
  });

  it('joins a line of many chunks, a CRLF cut between two, and lines that end exactly at a chunk', () => {
    const long = 'x'.repeat(100_000);
    const chunks = [...long.match(/.{1,997}/g)!, '\n', 'a\r', '\nb\n', 'c', '', 'd\n'];
    expect(linesOf(chunks)).toEqual([long, 'a', 'b', 'cd']);
  });

  it('gives nothing for an empty stream', () => {
    expect(linesOf([])).toEqual([]);
  });
});
