/**
 * Where the CI commands' output goes. Data on stdout (plain: the URL alone; `--json`: one event object per line),
 * progress on stderr: a spinner on a terminal, one line per change and a heartbeat every 30 s elsewhere (no escape
 * codes), GitHub Actions groups and `::error::` when running there.
 */
import fs from 'node:fs';

export type OutputMode = 'json' | 'tty' | 'plain';

export interface ReporterOptions {
  json: boolean;
  env?: NodeJS.ProcessEnv;
  stdout?: NodeJS.WriteStream;
  stderr?: NodeJS.WriteStream;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
export const HEARTBEAT_MS = 30_000;

/** Picks the mode: `--json` wins; a terminal (not CI, not TERM=dumb) gets the spinner; anything else plain lines. */
export function outputMode(json: boolean, env: NodeJS.ProcessEnv, stderr: NodeJS.WriteStream): OutputMode {
  if (json) return 'json';
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
  return stderr.isTTY && !ci && env.TERM !== 'dumb' ? 'tty' : 'plain';
}

export function formatElapsed(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

export class Reporter {
  readonly mode: OutputMode;
  private readonly github: boolean;
  private readonly env: NodeJS.ProcessEnv;
  private readonly stdout: NodeJS.WriteStream;
  private readonly stderr: NodeJS.WriteStream;
  private spinner: NodeJS.Timeout | null = null;
  private spinnerState = { frame: 0, status: '', since: Date.now(), lastLine: '' };
  private groupOpen = false;

  constructor(options: ReporterOptions) {
    this.env = options.env ?? process.env;
    this.stdout = options.stdout ?? process.stdout;
    this.stderr = options.stderr ?? process.stderr;
    this.mode = outputMode(options.json, this.env, this.stderr);
    this.github = this.env.GITHUB_ACTIONS === 'true' && this.mode !== 'json';
  }

  /** Whether log lines are worth fetching while waiting (a spinner shows the latest, JSON and GitHub show all). */
  get wantsLogs(): boolean {
    return this.mode !== 'plain' || this.github;
  }

  event(event: string, fields: Record<string, unknown>): void {
    if (this.mode === 'json') this.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
  }

  /** A plain progress line on stderr (never in JSON mode, whose stderr stays quiet). */
  info(message: string): void {
    if (this.mode === 'json') return;
    this.clearSpinnerLine();
    this.stderr.write(`${message}\n`);
  }

  step(step: string, revisionId: string): void {
    this.event('step', { step, revision_id: revisionId });
  }

  statusChange(status: string, revisionId: string, elapsedMs: number): void {
    this.closeGroup();
    this.event('status_change', { status, revision_id: revisionId, elapsed_s: Math.round(elapsedMs / 1000) });
    this.info(`${formatElapsed(elapsedMs)} ${status}`);
    this.spinnerState.status = status;
  }

  log(message: string, timestamp: string, status: string): void {
    this.event('log', { message, timestamp });
    if (this.mode === 'tty') this.spinnerState.lastLine = message;
    if (this.github) {
      if (!this.groupOpen) this.stderr.write(`::group::${status} log\n`);
      this.groupOpen = true;
      this.stderr.write(`${message}\n`);
    }
  }

  heartbeat(status: string, elapsedMs: number): void {
    this.event('heartbeat', { status, elapsed_s: Math.round(elapsedMs / 1000) });
    if (this.mode === 'plain') this.info(`${formatElapsed(elapsedMs)} still ${status}`);
  }

  warn(message: string): void {
    this.event('warn', { message });
    this.info(`warning: ${message}`);
  }

  /** A failure: an `error` event, or the message on stderr (and `::error::` on GitHub). */
  error(message: string, fields: Record<string, unknown> = {}): void {
    this.stopSpinner();
    this.closeGroup();
    this.event('error', { message, ...fields });
    if (this.mode === 'json') return;
    this.stderr.write(`${this.github ? '::error::' : 'error: '}${message.replace(/\n/g, this.github ? '%0A' : '\n')}\n`);
  }

  /** The revision's failing output (already trimmed to the last lines) and how to see all of it. */
  failureLog(lines: string[], seeAllCommand: string): void {
    this.event('log_tail', { lines, command: seeAllCommand });
    if (this.mode === 'json') return;
    this.stderr.write(`--- last ${lines.length} log lines ---\n${lines.map((line) => `${line}\n`).join('')}`);
    this.stderr.write(`--- all of them: ${seeAllCommand}\n`);
  }

  /** The outcome: the JSON `result` event, or the plain value (the URL) alone on stdout. */
  result(fields: Record<string, unknown>, plain: string | null): void {
    this.stopSpinner();
    this.closeGroup();
    this.event('result', fields);
    if (this.mode !== 'json' && plain) this.stdout.write(`${plain}\n`);
    this.writeGithubOutput(fields);
  }

  /** Data for a listing command: JSON as is, or lines of text. */
  data(value: unknown, text: string): void {
    if (this.mode === 'json') this.stdout.write(`${JSON.stringify(value)}\n`);
    else if (text) this.stdout.write(`${text}\n`);
  }

  startSpinner(status: string): void {
    if (this.mode !== 'tty' || this.spinner) return;
    this.spinnerState = { frame: 0, status, since: Date.now(), lastLine: '' };
    this.spinner = setInterval(() => this.drawSpinner(), 100);
    this.spinner.unref();
  }

  stopSpinner(): void {
    if (this.spinner) clearInterval(this.spinner);
    this.spinner = null;
    this.clearSpinnerLine();
  }

  private drawSpinner(): void {
    const state = this.spinnerState;
    state.frame = (state.frame + 1) % SPINNER.length;
    const head = `${SPINNER[state.frame]} ${state.status} ${formatElapsed(Date.now() - state.since)}`;
    const width = (this.stderr.columns || 80) - 1;
    const line = state.lastLine ? `${head}  ${state.lastLine.replace(/\s+/g, ' ')}` : head;
    this.stderr.write(`\r\x1b[2K${line.slice(0, width)}`);
  }

  private clearSpinnerLine(): void {
    if (this.mode === 'tty' && this.spinner) this.stderr.write('\r\x1b[2K');
  }

  private closeGroup(): void {
    if (this.groupOpen) this.stderr.write('::endgroup::\n');
    this.groupOpen = false;
  }

  /** `$GITHUB_OUTPUT`: `key=value` lines the next steps read as `steps.<id>.outputs.<key>`. */
  private writeGithubOutput(fields: Record<string, unknown>): void {
    const file = this.env.GITHUB_OUTPUT;
    if (!file) return;
    const keys = ['url', 'deployment_id', 'revision_id', 'status'];
    const lines = keys.map((key) => `${key}=${String(fields[key] ?? '').replace(/[\r\n]/g, ' ')}\n`).join('');
    fs.appendFileSync(file, lines);
  }
}
