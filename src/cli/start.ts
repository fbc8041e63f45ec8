/** `graphx start` (= `npm start`): the whole stack in the foreground; Ctrl-C or SIGTERM stops every child. */
import { loadConfig } from '../config';
import { startStack } from '../stack';

export async function runStart(): Promise<void> {
  // The embedded stack is a developer's machine: local repositories and OAuth servers are allowed unless set.
  const config = loadConfig(process.env, {
    GRAPHX_ALLOW_FILE_REPOS: process.env.GRAPHX_ALLOW_FILE_REPOS ?? '1',
    GRAPHX_ALLOW_INSECURE_OAUTH: process.env.GRAPHX_ALLOW_INSECURE_OAUTH ?? '1',
  });
  const stack = await startStack(config);
  const lines = [
    'graphx platform is running',
    `  API:           ${stack.apiUrl}  (docs: ${stack.apiUrl}/docs)`,
    `  Gateway:       ${stack.gatewayUrl}/<deployment-name>`,
    `  Temporal:      ${stack.temporalAddress}${config.temporalAddress ? ' (external)' : ' (dev server)'}`,
    `  Temporal UI:   ${stack.temporalUiUrl ?? '(external server: see its own UI)'}`,
    `  PostgreSQL:    ${config.databaseUrl ? 'external (DATABASE_URL)' : `embedded, data in ${config.dataDir}/pg`}`,
    `  API key file:  ${stack.apiKeyFile}`,
  ];
  if (stack.createdApiKey) lines.push(`  New API key (shown once): ${stack.createdApiKey}`);
  lines.push('Press Ctrl-C to stop.');
  console.log(lines.join('\n'));

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\ngraphx: ${signal} received, stopping…`);
    await stack.stop();
    console.log('graphx: stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}
