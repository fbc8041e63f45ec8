/** The CLI's pure parts: output modes, settings (the insecure-key refusal), durations, the deploy request. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { resolveSettings } from '../../src/cli/apiClient';
import { parseDuration } from '../../src/cli/ciCommands';
import { deploymentRequest } from '../../src/cli/deployCommand';
import { EXIT } from '@graphx/contract/exitCodes';
import { CliError } from '../../src/cli/cliError';
import { outputMode, Reporter } from '../../src/cli/reporter';

function stream(isTTY: boolean): NodeJS.WriteStream & { text: () => string } {
  const passThrough = new PassThrough();
  let text = '';
  passThrough.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return Object.assign(passThrough, { isTTY, columns: 80, text: () => text }) as unknown as NodeJS.WriteStream & {
    text: () => string;
  };
}

const exitCodeOf = (run: () => unknown): number | undefined => {
  try {
    run();
  } catch (error) {
    if (error instanceof CliError) return error.exitCode;
    throw error;
  }
  return undefined;
};

describe('graphx CLI output', () => {
  it('uses a spinner only on a terminal outside CI, plain lines otherwise, and JSON when asked', () => {
    expect(outputMode(false, {}, stream(true))).toBe('tty');
    expect(outputMode(false, { CI: 'true' }, stream(true))).toBe('plain');
    expect(outputMode(false, { TERM: 'dumb' }, stream(true))).toBe('plain');
    expect(outputMode(false, {}, stream(false))).toBe('plain');
    expect(outputMode(true, {}, stream(true))).toBe('json');
  });

  it('draws the spinner with the status and latest log line on a terminal, and writes no escape code in plain mode', async () => {
    for (const isTTY of [true, false]) {
      const stderr = stream(isTTY);
      const stdout = stream(false);
      const reporter = new Reporter({ json: false, env: {}, stderr, stdout });
      reporter.startSpinner('BUILDING');
      reporter.statusChange('BUILDING', 'rev', 1000);
      reporter.log('npm ci: added 12 packages', new Date().toISOString(), 'BUILDING');
      await new Promise((resolve) => setTimeout(resolve, 250));
      reporter.result({ url: 'http://x/app', status: 'DEPLOYED' }, 'http://x/app');
      expect(stdout.text()).toBe('http://x/app\n');
      if (isTTY) expect(stderr.text()).toMatch(/\r\x1b\[2K. BUILDING 0m0\ds {2}npm ci: added 12 packages/);
      else expect(stderr.text()).toBe('0m01s BUILDING\n');
    }
  });

  it('writes only JSON event lines on stdout with --json, failures included', () => {
    const stdout = stream(false);
    const stderr = stream(false);
    const reporter = new Reporter({ json: true, env: { GITHUB_ACTIONS: 'true' }, stderr, stdout });
    reporter.statusChange('BUILD_FAILED', 'rev', 2000);
    reporter.error('Revision rev ended BUILD_FAILED', { kind: 'failed' });
    reporter.failureLog(['line 1'], 'graphx logs d --revision rev --type build');
    const events = stdout
      .text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events.map((event) => event.event)).toEqual(['status_change', 'error', 'log_tail']);
    expect(stderr.text()).toBe('');
  });

  it('appends url, deployment_id, revision_id and status to $GITHUB_OUTPUT and marks a failure ::error:: on GitHub', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gh-')), 'output');
    fs.writeFileSync(file, 'earlier=1\n');
    const stderr = stream(false);
    const reporter = new Reporter({
      json: false,
      env: { GITHUB_ACTIONS: 'true', GITHUB_OUTPUT: file },
      stderr,
      stdout: stream(false),
    });
    reporter.log('building', new Date().toISOString(), 'BUILDING');
    reporter.error('it broke\nbadly');
    reporter.result({ deployment_id: 'd', revision_id: 'r', status: 'BUILD_FAILED', url: null }, null);
    expect(fs.readFileSync(file, 'utf8')).toBe('earlier=1\nurl=\ndeployment_id=d\nrevision_id=r\nstatus=BUILD_FAILED\n');
    expect(stderr.text()).toBe('::group::BUILDING log\nbuilding\n::endgroup::\n::error::it broke%0Abadly\n');
  });
});

describe('graphx CLI settings', () => {
  it('refuses to send a key over plain http to a non-loopback host unless --allow-insecure (exit 2)', () => {
    const env = { GRAPHX_API_KEY: 'k' };
    expect(exitCodeOf(() => resolveSettings({ apiUrl: 'http://ci.example.com:8080' }, env))).toBe(EXIT.usage);
    expect(exitCodeOf(() => resolveSettings({ apiUrl: 'http://10.0.0.5' }, env))).toBe(EXIT.usage);
    expect(resolveSettings({ apiUrl: 'http://ci.example.com:8080', allowInsecure: true }, env).apiUrl).toBe(
      'http://ci.example.com:8080',
    );
    for (const apiUrl of ['https://ci.example.com', 'http://127.0.0.1:8080/', 'http://localhost:8080', 'http://[::1]:8080']) {
      expect(resolveSettings({ apiUrl }, env).apiKey).toBe('k');
    }
    expect(exitCodeOf(() => resolveSettings({ apiUrl: 'https://ci.example.com' }, {}))).toBe(EXIT.usage);
    expect(exitCodeOf(() => resolveSettings({ apiUrl: 'ftp://x' }, env))).toBe(EXIT.usage);
  });

  it('reads --timeout as seconds or with s, m, h and rejects anything else with exit 2', () => {
    expect([parseDuration('90'), parseDuration('90s'), parseDuration('15m'), parseDuration('1h')]).toEqual([
      90_000, 90_000, 900_000, 3_600_000,
    ]);
    expect(exitCodeOf(() => parseDuration('soon'))).toBe(EXIT.usage);
  });

  it('builds the deploy request from a file with flags on top, secrets from the environment by name', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'deploy-')), 'deployment.json');
    fs.writeFileSync(
      file,
      JSON.stringify({ name: 'from-file', source_config: { repo_url: 'https://a/x.git', build_command: 'make' } }),
    );
    const options = { file, ref: 'v2', secret: ['TOKEN'], wait: true, timeoutMs: 1000 };
    expect(deploymentRequest(options, { TOKEN: 's3cret' })).toEqual({
      name: 'from-file',
      source: 'codehost',
      source_config: { repo_url: 'https://a/x.git', build_command: 'make' },
      source_revision_config: { repo_ref: 'v2' },
      secrets: [{ name: 'TOKEN', value: 's3cret' }],
    });
    expect(exitCodeOf(() => deploymentRequest(options, {}))).toBe(EXIT.usage);
    expect(exitCodeOf(() => deploymentRequest({ secret: [], wait: true, timeoutMs: 1 }, {}))).toBe(EXIT.usage);
  });
});
