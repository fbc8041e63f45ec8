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

/**
 * A logger with the process's settings (level, redaction, base fields) writing JSON lines to `destination` (default
 * stdout). Never coloured: pino writes plain JSON whatever the terminal.
 */
export function createLogger(destination?: pino.DestinationStream, level?: string): pino.Logger {
  const options: pino.LoggerOptions = {
    level: level ?? process.env.GRAPHX_LOG_LEVEL ?? (process.env.JEST_WORKER_ID ? 'silent' : 'info'),
    redact: { paths: REDACTED_PATHS, censor: '********' },
    base: { service: 'graphx' },
  };
  return destination ? pino(options, destination) : pino(options);
}

export const logger = createLogger();

/**
 * Sets the process logger's level from the validated configuration. Entry points call it right after loading the
 * configuration: the module-level logger exists before it (imports log), so it starts from the environment.
 */
export function applyLogLevel(config: { logLevel: string }): void {
  logger.level = config.logLevel;
}

export type Logger = pino.Logger;
