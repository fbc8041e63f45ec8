/** One pino logger for the whole process; secrets are redacted by path so a stray object cannot leak them. */
import pino from 'pino';

export const REDACTED_PATHS = [
  '*.client_secret',
  '*.clientSecret',
  '*.access_token',
  '*.refresh_token',
  '*.password',
  '*.apiKey',
  '*.api_key',
  'headers["x-api-key"]',
  'headers.authorization',
  'secrets[*].value',
];

/** Bytes of log lines gathered before one write (docs/decisions.md, "Buffered asynchronous log output"). */
export const LOG_BUFFER_BYTES = 4096;
/** A line waits at most about this long in the buffer when the process is quiet. */
export const LOG_FLUSH_MS = 100;

/**
 * pino's asynchronous destination on `dest` (a file descriptor, 1 for stdout, or a file path): lines are gathered and
 * written LOG_BUFFER_BYTES at a time instead of one blocking write each. What is still buffered is written every
 * LOG_FLUSH_MS (a quiet process's lines show up at once, to a person as to a log reader), on `logger.flush()`, and
 * synchronously when the process exits (pino registers that itself for an asynchronous destination, process.exit
 * included). Returns the destination and the pino hooks that tell the flush timer a line is waiting.
 */
function bufferedOutput(dest: number | string): { stream: pino.DestinationStream; hooks: pino.LoggerOptions['hooks'] } {
  const stream = pino.destination({ dest, sync: false, minLength: LOG_BUFFER_BYTES });
  let unwritten = false;
  const timer = setInterval(() => {
    if (!unwritten) return;
    unwritten = false;
    try {
      stream.flush();
    } catch {
      clearInterval(timer); // destroyed: nothing can be written any more
    }
  }, LOG_FLUSH_MS);
  // The timer never keeps a process alive: exit writes what is left synchronously.
  timer.unref();
  stream.once('close', () => clearInterval(timer));
  return {
    stream,
    hooks: {
      streamWrite: (line) => {
        unwritten = true;
        return line;
      },
    },
  };
}

/**
 * A logger with the process's settings (level, redaction, base fields) writing JSON lines to `destination`: a stream
 * as it is (synchronous to the logger, as tests read them), or a file descriptor or path through the buffered
 * asynchronous output (default: stdout, fd 1). Never coloured: pino writes plain JSON whatever the terminal.
 */
export function createLogger(destination: pino.DestinationStream | number | string = 1, level?: string): pino.Logger {
  const output = typeof destination === 'object' ? { stream: destination, hooks: undefined } : bufferedOutput(destination);
  const options: pino.LoggerOptions = {
    level: level ?? process.env.GRAPHX_LOG_LEVEL ?? (process.env.JEST_WORKER_ID ? 'silent' : 'info'),
    redact: { paths: REDACTED_PATHS, censor: '********' },
    base: { service: 'graphx' },
    ...(output.hooks ? { hooks: output.hooks } : {}),
  };
  return pino(options, output.stream);
}

export const logger = createLogger();

/**
 * Writes out what the process logger has buffered, resolving once written. Stop paths call it last, so a stopped
 * stack's lines are all out even when the process lives on (a test, an embedding program).
 */
export function flushLogs(log: pino.Logger = logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      log.flush(() => resolve());
    } catch {
      resolve(); // a destroyed destination has nothing left to write
    }
  });
}

/**
 * Sets the process logger's level from the validated configuration. Entry points call it right after loading the
 * configuration: the module-level logger exists before it (imports log), so it starts from the environment.
 */
export function applyLogLevel(config: { logLevel: string }): void {
  logger.level = config.logLevel;
}

export type Logger = pino.Logger;
