/**
 * The CI commands of `graphx` (deploy, wait, status, logs, revisions, deployments): small clients of the public
 * `/v2` API. Each returns its exit code; errors are CliErrors carrying theirs (see exitCodes.ts).
 */
import type { Command } from 'commander';
import { ApiClient, resolveSettings } from './apiClient';
import { runDeploy } from './deployCommand';
import { findDeploymentByName } from './deployCommand';
import { EXIT } from '@graphx/contract/exitCodes';
import { CliError } from './cliError';
import { Reporter } from './reporter';
import { waitForRevision } from './waitRevision';

interface GlobalOptions {
  apiUrl?: string;
  apiKey?: string;
  allowInsecure?: boolean;
  json?: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEFAULT_TIMEOUT = '15m';

/** `90`, `90s`, `15m`, `1h` → milliseconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+)(s|m|h)?$/.exec(value.trim());
  if (!match) throw new CliError(EXIT.usage, `--timeout ${value}: use seconds or a number with s, m or h (e.g. 15m).`);
  const unit = { s: 1, m: 60, h: 3600 }[(match[2] ?? 's') as 's' | 'm' | 'h'];
  return Number(match[1]) * unit * 1000;
}

/** Runs a command body with its client and reporter; the exit code goes to `process.exitCode`. */
function action<A extends unknown[]>(run: (context: Context, ...args: A) => Promise<number>) {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const options = command.optsWithGlobals<GlobalOptions>();
    const reporter = new Reporter({ json: Boolean(options.json) });
    try {
      const client = new ApiClient(resolveSettings(options));
      process.exitCode = await run({ client, reporter, options: command.opts() }, ...(args.slice(0, -2) as A));
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      reporter.error(error.message, { exit_code: error.exitCode });
      process.exitCode = error.exitCode;
    }
  };
}

interface Context {
  client: ApiClient;
  reporter: Reporter;
  options: Record<string, any>;
}

async function deploymentIdOf(client: ApiClient, reference: string): Promise<string> {
  if (UUID.test(reference)) return reference;
  const found = await findDeploymentByName(client, reference);
  if (!found) throw new CliError(EXIT.usage, `No deployment named ${reference}.`);
  return found.id;
}

async function latestRevisionOf(client: ApiClient, deploymentId: string): Promise<string> {
  const deployment = await client.get<{ latest_revision_id: string | null }>(`/v2/deployments/${deploymentId}`);
  if (!deployment.latest_revision_id) throw new CliError(EXIT.usage, `Deployment ${deploymentId} has no revision.`);
  return deployment.latest_revision_id;
}

const collect = (value: string, previous: string[]) => [...previous, value];

function waitOptions(command: Command): Command {
  return command
    .option('--no-wait', 'return once the request is accepted')
    .option('--timeout <duration>', 'how long to wait (e.g. 90s, 15m)', DEFAULT_TIMEOUT);
}

/** Adds the CI commands and their global options to `program`. */
export function registerCiCommands(program: Command): void {
  program
    .option('--api-url <url>', 'control-plane URL (default $GRAPHX_API_URL, else http://127.0.0.1:8080)')
    .option('--api-key <key>', 'API key (default $GRAPHX_API_KEY; prefer the variable: flags show in ps)')
    .option('--allow-insecure', 'allow sending the key over plain http to a non-loopback host')
    .option('--json', 'one JSON event per line on stdout');

  waitOptions(
    program
      .command('deploy')
      .description('create or update a deployment by name and wait for its revision (exit 0 DEPLOYED; see README)')
      .option('-f, --file <path>', 'JSON body of POST /v2/deployments; flags override its fields')
      .option('--name <name>', 'deployment name')
      .option('--repo-url <url>', 'git repository to build')
      .option('--ref <ref>', 'branch, tag or commit')
      .option('--config-path <path>', 'path of graphx.json in the repository')
      .option('--image <uri>', 'deploy a ready image instead of a repository')
      .option('--install-command <command>', 'replaces the install step')
      .option('--build-command <command>', 'runs after the install')
      .option('--secret <NAME>', 'secret taken from the environment variable NAME (repeatable)', collect, []),
  ).action(
    action(async ({ client, reporter, options }) =>
      runDeploy(client, reporter, {
        ...options,
        secret: options.secret,
        wait: options.wait,
        timeoutMs: parseDuration(options.timeout),
      }),
    ),
  );

  program
    .command('wait <revision>')
    .description('wait for a revision to settle (exit codes as deploy)')
    .requiredOption('--deployment <deployment>', 'deployment id or name')
    .option('--timeout <duration>', 'how long to wait (e.g. 90s, 15m)', DEFAULT_TIMEOUT)
    .action(
      action(async ({ client, reporter, options }, revisionId: string) => {
        const deploymentId = await deploymentIdOf(client, options.deployment);
        return waitForRevision(client, reporter, { deploymentId, revisionId, timeoutMs: parseDuration(options.timeout) });
      }),
    );

  program
    .command('status <deployment>')
    .description("a deployment's status, URL and latest revision")
    .action(
      action(async ({ client, reporter }, reference: string) => {
        const id = await deploymentIdOf(client, reference);
        const deployment = await client.get<Record<string, any>>(`/v2/deployments/${id}`);
        const latest = deployment.latest_revision_id
          ? await client.get<Record<string, any>>(`/v2/deployments/${id}/revisions/${deployment.latest_revision_id}`)
          : null;
        reporter.data(
          { deployment, latest_revision: latest },
          [
            `deployment ${deployment.name} ${deployment.id}: ${deployment.status}`,
            `url: ${deployment.url ?? '-'}`,
            `active revision: ${deployment.active_revision_id ?? '-'}`,
            latest
              ? `latest revision: ${latest.id} ${latest.status}${latest.status_message ? ` (${latest.status_message})` : ''}`
              : '',
          ]
            .filter(Boolean)
            .join('\n'),
        );
        return EXIT.deployed;
      }),
    );

  registerLogsCommand(program);
  registerRevisionCommands(program);
  registerDeploymentCommands(program);
}

function registerLogsCommand(program: Command): void {
  program
    .command('logs <deployment>')
    .description("a revision's build log (default: the latest revision) or the app's own output")
    .option('--revision <id>', 'revision id (build logs)')
    .option('--type <type>', 'build or app', 'build')
    .option('-f, --follow', 'keep printing new lines (Ctrl-C ends)')
    .action(
      action(async ({ client, reporter, options }, reference: string) => {
        if (options.type !== 'build' && options.type !== 'app') throw new CliError(EXIT.usage, '--type is build or app.');
        const id = await deploymentIdOf(client, reference);
        const base =
          options.type === 'app'
            ? `/v2/deployments/${id}/logs`
            : `/v2/deployments/${id}/revisions/${options.revision ?? (await latestRevisionOf(client, id))}/logs`;
        let offset = 0;
        let stopped = false;
        process.once('SIGINT', () => (stopped = true));
        for (;;) {
          const page = await client.get<{ logs: Array<{ timestamp: string; level: string; message: string }> }>(
            `${base}?order=asc&limit=1000&offset=${offset}`,
          );
          for (const line of page.logs) reporter.data(line, `${line.timestamp} ${line.message}`);
          offset += page.logs.length;
          if (page.logs.length === 1000) continue;
          if (!options.follow || stopped) return EXIT.deployed;
          await new Promise((resolve) => setTimeout(resolve, 1000));
          if (stopped) return EXIT.deployed;
        }
      }),
    );
}

function registerRevisionCommands(program: Command): void {
  const revisions = program.command('revisions').description('list, retry, interrupt or redeploy revisions');
  revisions
    .command('list <deployment>')
    .option('--status <statuses>', 'comma list of statuses')
    .option('--limit <n>', 'how many, newest first', '20')
    .action(
      action(async ({ client, reporter, options }, reference: string) => {
        const id = await deploymentIdOf(client, reference);
        const filter = options.status ? `&status=${encodeURIComponent(options.status)}` : '';
        const page = await client.get<{ resources: Array<Record<string, any>> }>(
          `/v2/deployments/${id}/revisions?limit=${encodeURIComponent(options.limit)}${filter}`,
        );
        reporter.data(
          page.resources,
          page.resources
            .map((revision) => `${revision.id} #${revision.number} ${revision.status} ${revision.created_at}`)
            .join('\n'),
        );
        return EXIT.deployed;
      }),
    );
  for (const [name, description] of [
    ['retry', 'retry a failed revision from its failed step, then wait'],
    ['redeploy', 'deploy an older revision again as a new revision, then wait'],
  ] as const) {
    waitOptions(revisions.command(`${name} <deployment> <revision>`).description(description)).action(
      action(async ({ client, reporter, options }, reference: string, revisionId: string) => {
        const id = await deploymentIdOf(client, reference);
        const answer = await client.post<{ latest_revision_id?: string }>(
          `/v2/deployments/${id}/revisions/${revisionId}/${name}`,
        );
        const followed = name === 'redeploy' ? (answer.latest_revision_id ?? revisionId) : revisionId;
        reporter.info(`${name === 'retry' ? 'Retry sent to' : 'Redeployed as'} revision ${followed}.`);
        if (!options.wait) {
          reporter.result({ deployment_id: id, revision_id: followed, status: null, url: null }, followed);
          return EXIT.deployed;
        }
        return waitForRevision(client, reporter, {
          deploymentId: id,
          revisionId: followed,
          timeoutMs: parseDuration(options.timeout),
        });
      }),
    );
  }
  revisions
    .command('interrupt <deployment> <revision>')
    .description('interrupt a revision in progress')
    .action(
      action(async ({ client, reporter }, reference: string, revisionId: string) => {
        const id = await deploymentIdOf(client, reference);
        const answer = await client.post<{ detail: string }>(`/v2/deployments/${id}/revisions/${revisionId}/interrupt`);
        reporter.data(answer, answer.detail);
        return EXIT.deployed;
      }),
    );
}

function registerDeploymentCommands(program: Command): void {
  const deployments = program.command('deployments').description('list or delete deployments');
  deployments
    .command('list')
    .option('--name-contains <text>', 'filter by name')
    .option('--limit <n>', 'how many', '100')
    .action(
      action(async ({ client, reporter, options }) => {
        const filter = options.nameContains ? `&name_contains=${encodeURIComponent(options.nameContains)}` : '';
        const page = await client.get<{ resources: Array<Record<string, any>> }>(
          `/v2/deployments?limit=${encodeURIComponent(options.limit)}${filter}`,
        );
        reporter.data(
          page.resources,
          page.resources
            .map((deployment) => `${deployment.id} ${deployment.name} ${deployment.status} ${deployment.url ?? '-'}`)
            .join('\n'),
        );
        return EXIT.deployed;
      }),
    );
  deployments
    .command('delete <deployment>')
    .option('--delete-tracing-project', 'also delete its tracing project')
    .action(
      action(async ({ client, reporter, options }, reference: string) => {
        const id = await deploymentIdOf(client, reference);
        await client.delete(`/v2/deployments/${id}?delete_tracing_project=${options.deleteTracingProject ? 'true' : 'false'}`);
        reporter.data({ deleted: id }, `Deleting deployment ${id}.`);
        return EXIT.deployed;
      }),
    );
}
