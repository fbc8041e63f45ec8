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

export const logger = pino({
  level: process.env.GRAPHX_LOG_LEVEL ?? (process.env.JEST_WORKER_ID ? 'silent' : 'info'),
  redact: { paths: REDACTED_PATHS, censor: '********' },
  base: { service: 'graphx' },
});

export type Logger = pino.Logger;
