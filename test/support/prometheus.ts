/**
 * A small strict parser of the Prometheus text exposition format (0.0.4), for tests that scrape `/metrics`: every
 * line must be a comment (`# HELP`/`# TYPE`/other), blank, or a sample `name{label="value",...} value [timestamp]`;
 * anything else throws, so a malformed exposition fails the test instead of being skipped.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
  /** Samples named `name` whose labels include every pair of `labels`. */
  find: (name: string, labels?: Record<string, string>) => Sample[];
  /** The sum of those samples' values (0 when none). */
  sum: (name: string, labels?: Record<string, string>) => number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Values follow Go's ParseFloat, which Prometheus uses: NaN and Inf in any letter case (prom-client writes `Nan`). */
function parseValue(text: string, line: string): number {
  const special = text.toLowerCase();
  if (special === '+inf' || special === 'inf') return Infinity;
  if (special === '-inf') return -Infinity;
  if (special === 'nan') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad sample value in: ${line}`);
  return Number(text);
}

function parseLabels(text: string, line: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let rest = text.slice(1);
  for (;;) {
    if (rest.startsWith('}')) return { labels, rest: rest.slice(1) };
    const name = LABEL_NAME.exec(rest)?.[0];
    if (!name || rest[name.length] !== '=' || rest[name.length + 1] !== '"') throw new Error(`bad label in: ${line}`);
    rest = rest.slice(name.length + 2);
    let value = '';
    for (;;) {
      const char = rest[0];
      if (char === undefined) throw new Error(`unterminated label value in: ${line}`);
      rest = rest.slice(1);
      if (char === '"') break;
      if (char === '\\') {
        const escaped = rest[0];
        rest = rest.slice(1);
        if (escaped === 'n') value += '\n';
        else if (escaped === '\\' || escaped === '"') value += escaped;
        else throw new Error(`bad escape in: ${line}`);
      } else value += char;
    }
    if (name in labels) throw new Error(`duplicate label ${name} in: ${line}`);
    labels[name] = value;
    if (rest.startsWith(',')) rest = rest.slice(1);
    else if (!rest.startsWith('}')) throw new Error(`expected , or } in: ${line}`);
  }
}

/** Parses a whole exposition; throws on the first malformed line. */
export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\S+)$/.exec(line);
      if (type) {
        if (!TYPES.has(type[2] as string)) throw new Error(`unknown metric type in: ${line}`);
        types.set(type[1] as string, type[2] as string);
      } else if (line.startsWith('# TYPE') || (line.startsWith('# HELP') && !/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* /.test(line))) {
        throw new Error(`bad comment line: ${line}`);
      }
      continue;
    }
    const name = NAME.exec(line)?.[0];
    if (!name) throw new Error(`bad metric name in: ${line}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest, line));
    const parts = rest.trim().split(/\s+/);
    if (!rest.startsWith(' ') || parts.length < 1 || parts.length > 2) throw new Error(`bad sample line: ${line}`);
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`bad timestamp in: ${line}`);
    samples.push({ name, labels, value: parseValue(parts[0] as string, line) });
  }
  const find = (name: string, labels: Record<string, string> = {}) =>
    samples.filter(
      (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    );
  return { samples, types, find, sum: (name, labels) => find(name, labels).reduce((total, s) => total + s.value, 0) };
}

/** GETs `url` and parses the answer, checking it is served as the text format. */
export async function scrape(url: string): Promise<Exposition> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain')) throw new Error(`${url} served ${type}, not the text format`);
  return parseExposition(await response.text());
}
