/**
 * The promises the parts make each other, written once in @graphx/contract: graphx.json as each runner reads it, the
 * instance environment both ends speak, the run-record truncation rule, and the exit code of each revision status.
 */
import { exitCodeOfStatus, EXIT } from '@graphx/contract/exitCodes';
import { GraphxConfigError, parseGraphxConfig, parseEnvFile } from '@graphx/contract/graphxConfig';
import { fromInstanceEnv, INSTANCE_ENV, toInstanceEnv, type InstanceIdentity } from '@graphx/contract/instanceEnv';
import { MAX_PAYLOAD_BYTES, recordPayload, TRUNCATED_MARK, truncatedText } from '@graphx/contract/runRecord';
import { REVISION_STATUSES } from '@graphx/contract/statuses';

describe('graphx.json', () => {
  const text = (config: Record<string, unknown>) => JSON.stringify({ graphs: { agent: './src/graph.ts:graph' }, ...config });

  test('a graph may be "<file>:<export>" or {path, description}, for the build as for the runtime', () => {
    const { config } = parseGraphxConfig(
      text({ graphs: { a: './a.ts:graph', b: { path: './b.ts:make', description: 'the b graph' } } }),
      { runner: 'process' },
    );
    expect(config.graphs).toEqual([
      { graphId: 'a', path: './a.ts', exportName: 'graph', description: null, language: 'javascript', module: null },
      { graphId: 'b', path: './b.ts', exportName: 'make', description: 'the b graph', language: 'javascript', module: null },
    ]);
  });

  test('JavaScript and Python graphs may be named in one file: a .py file or a dotted module is Python', () => {
    const { config } = parseGraphxConfig(
      text({
        graphs: {
          js: './src/graph.ts:graph',
          file: './agent/graph.py:graph',
          module: { path: 'agent.graph:make_graph', description: 'by module' },
        },
        dependencies: ['.', 'httpx>=0.27'],
        pip_config_file: './pip.conf',
      }),
      { runner: 'process' },
    );
    expect(config.graphs.map(({ graphId, language, module }) => ({ graphId, language, module }))).toEqual([
      { graphId: 'js', language: 'javascript', module: null },
      { graphId: 'file', language: 'python', module: null },
      { graphId: 'module', language: 'python', module: 'agent.graph' },
    ]);
    expect(config.python).toEqual({
      version: '3.11',
      dependencies: ['.', 'httpx>=0.27'],
      pipConfigFile: './pip.conf',
      installer: 'pip',
      source: null,
    });
    expect(parseGraphxConfig(text({}), { runner: 'process' }).config.python).toBeNull();
  });

  test('source {"kind": "uv", "root", "package"} as langgraph-cli reads it; dependencies beside it fail naming both', () => {
    const python = (extra: Record<string, unknown>) =>
      parseGraphxConfig(text({ graphs: { a: './a.py:graph' }, ...extra }), { runner: 'process' }).config.python;
    expect(python({ source: { kind: 'uv', root: '..', package: 'agent' } })).toMatchObject({
      source: { kind: 'uv', root: '..', package: 'agent' },
      dependencies: [],
    });
    expect(python({ source: { kind: 'uv' } })?.source).toEqual({ kind: 'uv', root: '.', package: null });
    expect(() => python({ source: { kind: 'poetry' } })).toThrow(/"source.kind" must be \[uv\]/);
    expect(() => python({ source: { kind: 'uv' }, dependencies: ['.'] })).toThrow(
      '"dependencies" cannot be used with "source": {"kind": "uv"}: the dependencies are read from pyproject.toml and uv.lock.',
    );
    expect(python({ pip_installer: 'uv' })?.installer).toBe('uv');
    expect(python({ pip_installer: 'auto' })?.installer).toBe('pip');
    expect(() => python({ pip_installer: 'uv', pip_config_file: 'pip.conf' })).toThrow(/does not read "pip_config_file"/);
  });

  test('python_version is 3.11, 3.12 or 3.13; any other fails the build naming the versions offered', () => {
    const python = (version: unknown) =>
      parseGraphxConfig(JSON.stringify({ graphs: { a: './a.py:graph' }, python_version: version }), { runner: 'container' })
        .config.python?.version;
    expect(python('3.12')).toBe('3.12');
    expect(python(3.13)).toBe('3.13');
    expect(python('3.11.9')).toBe('3.11');
    expect(() => python('3.9')).toThrow('"python_version" "3.9" is not offered: use 3.11, 3.12, 3.13 (default 3.11).');
    expect(() => python('2')).toThrow(GraphxConfigError);
  });

  test('dockerfile_lines is honoured by the container runner and named in a warning by the process runner', () => {
    const source = text({ dockerfile_lines: ['RUN true'] });
    const asContainer = parseGraphxConfig(source, { runner: 'container' });
    expect(asContainer).toMatchObject({ config: { dockerfileLines: ['RUN true'] }, warnings: [] });
    const asProcess = parseGraphxConfig(source, { runner: 'process' });
    expect(asProcess.warnings).toEqual([
      'graphx.json "dockerfile_lines" is accepted but not supported here (apps run as processes, not images); it has no effect.',
    ]);
    expect(() => parseGraphxConfig(text({ dockerfile_lines: ['FROM evil'] }), { runner: 'container' })).toThrow(
      /may not use FROM/,
    );
  });

  test('http.app may name a Python ASGI app; http.configurable_headers takes includes/excludes (or include/exclude)', () => {
    const http = (value: unknown) => parseGraphxConfig(text({ http: value }), { runner: 'process' }).config.http;
    expect(http({ app: './web/app.py:app' }).app).toEqual({
      path: './web/app.py',
      exportName: 'app',
      language: 'python',
      module: null,
    });
    expect(http({ configurable_headers: { includes: ['x-*'], excludes: ['x-secret'] } }).configurableHeaders).toEqual({
      includes: ['x-*'],
      excludes: ['x-secret'],
    });
    expect(http({ configurable_headers: { include: ['my-*'] } }).configurableHeaders).toEqual({
      includes: ['my-*'],
      excludes: [],
    });
    expect(http({}).configurableHeaders).toBeNull();
    expect(() => http({ configurable_headers: { includes: 'x-*' } })).toThrow(/includes/);
  });

  test('an undocumented key fails a build naming it, and only warns graphx dev', () => {
    expect(() => parseGraphxConfig(text({ grahps: {} }), { runner: 'process' })).toThrow(GraphxConfigError);
    expect(() => parseGraphxConfig(text({ grahps: {} }), { runner: 'process' })).toThrow(/unknown key\(s\) "grahps"/);
    expect(parseGraphxConfig(text({ grahps: {} }), { unknownKeys: 'warn' }).warnings[0]).toMatch(/unknown key\(s\) "grahps"/);
  });

  test('env files have one parser: comments, quotes and export lines', () => {
    expect(parseEnvFile('A=1\nexport B="two words" # note\n# C=3\n')).toEqual({ A: '1', B: 'two words' });
  });
});

test('the instance environment a runner writes is what the runtime reads', () => {
  const identity: InstanceIdentity = {
    port: 8123,
    host: '0.0.0.0',
    databaseUri: 'postgresql://app@localhost/db',
    configPath: 'graphx.json',
    deploymentId: 'd',
    revisionId: 'r',
    tenantId: 't',
    controlPlaneUrl: 'http://control-plane',
    controlPlaneSocket: '/run/cp.sock',
    serviceToken: 'service-token-123',
  };
  const env = toInstanceEnv(identity);
  expect(env[INSTANCE_ENV.revisionId]).toBe('r');
  expect(fromInstanceEnv(env)).toEqual({ ...identity, workers: 1 });
  expect(() => fromInstanceEnv({ ...env, [INSTANCE_ENV.databaseUri]: undefined })).toThrow(/DATABASE_URI/);
});

test('a run payload over 64 KiB is cut, with its mark, to 64 KiB at most; a smaller one stays JSON', () => {
  expect(recordPayload('{"a":1}')).toEqual({ a: 1 });
  const big = JSON.stringify({ text: 'é'.repeat(MAX_PAYLOAD_BYTES) });
  const cut = recordPayload(big) as string;
  expect(cut.endsWith(TRUNCATED_MARK)).toBe(true);
  expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
  expect(truncatedText(cut)).toBe(cut);
});

test('every revision status has its exit code from the status groups', () => {
  const codes = Object.fromEntries(REVISION_STATUSES.map((status) => [status, exitCodeOfStatus(status)]));
  expect(codes).toEqual({
    CREATING: null,
    QUEUED: null,
    AWAITING_BUILD: null,
    BUILDING: null,
    AWAITING_DEPLOY: null,
    DEPLOYING: null,
    DEPLOYED: EXIT.deployed,
    CREATE_FAILED: EXIT.failed,
    BUILD_FAILED: EXIT.failed,
    DEPLOY_FAILED: EXIT.failed,
    SKIPPED: EXIT.skipped,
    INTERRUPTED: EXIT.failed,
    UNKNOWN: EXIT.failed,
  });
});
