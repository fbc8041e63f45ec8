/**
 * Readiness: can this process do its work right now? Each dependency is checked with a bound (a dead Temporal makes
 * gRPC calls hang until their deadline) and the verdict is reused for a second, so probes from several balancers
 * cost one check per second at most. Liveness (`/ok`) stays a plain 200: a restart cures neither a dead database nor
 * a dead Temporal.
 */
import type http from 'node:http';
import type Koa from 'koa';

export interface ReadinessCheck {
  /** What is down, as the `detail` names it (`database`, `temporal`). */
  name: string;
  /** Resolves when the dependency answers; rejects (or outlasts the bound) when it does not. */
  check: () => Promise<unknown>;
}

export interface ReadinessVerdict {
  ready: boolean;
  /** `null` when ready; else a sentence naming every dependency down and why. */
  detail: string | null;
  checks: Record<string, 'up' | 'down'>;
}

export interface ReadinessOptions {
  /** Bound of each check (default 2 s). */
  timeoutMs?: number;
  /** How long a verdict is reused (default 1 s). */
  cacheMs?: number;
}

/** Runs the checks at most once per `cacheMs`; concurrent callers share the run in flight. */
export class Readiness {
  private readonly timeoutMs: number;
  private readonly cacheMs: number;
  private last: { verdict: ReadinessVerdict; at: number } | null = null;
  private inFlight: Promise<ReadinessVerdict> | null = null;

  constructor(
    private readonly checks: ReadinessCheck[],
    options: ReadinessOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 2_000;
    this.cacheMs = options.cacheMs ?? 1_000;
  }

  /** The current verdict (cached for `cacheMs`). */
  verdict(): Promise<ReadinessVerdict> {
    if (this.last && Date.now() - this.last.at < this.cacheMs) return Promise.resolve(this.last.verdict);
    return (this.inFlight ??= this.run().finally(() => (this.inFlight = null)));
  }

  private async run(): Promise<ReadinessVerdict> {
    const results = await Promise.all(this.checks.map((check) => this.bounded(check)));
    const down = results.filter((result) => result.error !== null);
    const verdict: ReadinessVerdict = {
      ready: down.length === 0,
      detail: down.length === 0 ? null : `Not ready: ${down.map((result) => `${result.name} (${result.error})`).join('; ')}.`,
      checks: Object.fromEntries(results.map((result) => [result.name, result.error === null ? 'up' : 'down'])),
    };
    this.last = { verdict, at: Date.now() };
    return verdict;
  }

  private async bounded(check: ReadinessCheck): Promise<{ name: string; error: string | null }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      await Promise.race([check.check(), timeout]);
      return { name: check.name, error: null };
    } catch (error) {
      // Only the first line: driver errors can be long, and this sentence is for a person reading a probe.
      const message = ((error as Error)?.message ?? String(error)).split('\n')[0]?.slice(0, 200) ?? 'failed';
      return { name: check.name, error: message };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The body and status of a readiness answer: 200 `{ready: true}` or 503 `{detail, checks}`. */
export async function readinessAnswer(readiness: Readiness): Promise<{ status: number; body: Record<string, unknown> }> {
  const verdict = await readiness.verdict();
  return verdict.ready
    ? { status: 200, body: { ready: true, checks: verdict.checks } }
    : { status: 503, body: { ready: false, detail: verdict.detail, checks: verdict.checks } };
}

/** Koa handler of `GET /ready`. */
export function readinessHandler(readiness: Readiness): Koa.Middleware {
  return async (ctx) => {
    const { status, body } = await readinessAnswer(readiness);
    ctx.status = status;
    ctx.body = body;
  };
}

/** Plain node handler of `GET /ready` (the worker's metrics server has no Koa). */
export async function writeReadiness(readiness: Readiness, res: http.ServerResponse): Promise<void> {
  const { status, body } = await readinessAnswer(readiness);
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
