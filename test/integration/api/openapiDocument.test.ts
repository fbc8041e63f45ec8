/**
 * The public OpenAPI document passes a real OpenAPI 3.1 validator and Redocly's `recommended` rules, documents every
 * answer a client can get, keeps internal routes out, and says the truth: real answers match the documented schemas.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type Koa from 'koa';
import request from 'supertest';
import { buildApi } from '../../../src/api/app';
import { buildOpenApi } from '../../../src/api/openapi';
import type { Db } from '../../../src/db/knex';
import { createTenant, testConfig, testDb, testSecretBox, testTemporalClient } from '../../support/env';

interface LintReport {
  validator: { valid: boolean; errors: unknown[] };
  redocly: Array<{ ruleId: string; severity: 'error' | 'warn'; message: string; pointer?: string }>;
}

/** Both linters are ES modules, which jest's CommonJS runtime cannot load: they run in a node child (openapiLint.mjs). */
function lint(document: unknown): Promise<LintReport> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [path.join(__dirname, '../../support/openapiLint.mjs')],
      { maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    );
    child.stdin!.end(JSON.stringify(document));
  });
}

type Operation = { security?: unknown[]; responses: Record<string, any>; tags?: string[] };
const operationsOf = (document: any): Array<[string, string, Operation]> =>
  Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(([route, methods]) =>
    Object.entries(methods).map(([method, operation]) => [method, route, operation] as [string, string, Operation]),
  );

describe('the public OpenAPI document', () => {
  let db: Db;
  let temporal: Client;
  let app: Koa;
  let document: any;
  let internalDocument: any;

  beforeAll(async () => {
    db = testDb();
    temporal = await testTemporalClient();
    const config = testConfig();
    const api = buildApi({ config, db, secretBox: testSecretBox(config), temporal });
    app = api.app;
    document = buildOpenApi(api.registry);
    internalDocument = buildOpenApi(api.registry, { includeInternal: true });
  });
  afterAll(async () => {
    await temporal.connection.close();
    await db.destroy();
  });

  it('passes the OpenAPI 3.1 schema validator and Redocly recommended rules with no error and no wrong example', async () => {
    const report = await lint(document);
    expect(report.validator.errors).toEqual([]);
    expect(report.validator.valid).toBe(true);
    const errors = report.redocly.filter((problem) => problem.severity === 'error');
    const warnings = report.redocly.filter((problem) => problem.severity === 'warn');
    process.stderr.write(`[openapi] Redocly recommended: ${errors.length} errors, ${warnings.length} warnings\n`);
    for (const warning of warnings)
      process.stderr.write(`[openapi] warn ${warning.ruleId} ${warning.pointer}: ${warning.message}\n`);
    expect(errors).toEqual([]);
    // An example that contradicts its schema is a warning for Redocly; for us it is documentation that lies.
    expect(warnings.filter((problem) => problem.ruleId === 'no-invalid-media-type-examples')).toEqual([]);
  });

  it('gives every success answer a schema with fields and documents 401, 413, 422 and 500 with a JSON detail', () => {
    const schemas = document.components.schemas;
    expect(schemas.ErrorDetail.required).toEqual(['detail']);
    expect(schemas.HTTPValidationError.required).toEqual(['detail']);
    for (const [method, route, operation] of operationsOf(document)) {
      const where = `${method.toUpperCase()} ${route}`;
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!status.startsWith('2') || status === '204') continue;
        // An object with fields, or (Prometheus's service discovery format) a list of them.
        const content = response.content?.['application/json']?.schema;
        const schema = content?.type === 'array' ? content.items : content;
        expect({ where, status, properties: Object.keys(schema?.properties ?? {}).length > 0 }).toEqual({
          where,
          status,
          properties: true,
        });
      }
      expect({ where, has500: operation.responses['500'] }).toEqual({
        where,
        has500: { $ref: '#/components/responses/InternalError' },
      });
      if ((operation.security ?? []).length > 0) {
        expect({ where, has401: operation.responses['401'] }).toEqual({
          where,
          has401: { $ref: '#/components/responses/Unauthorized' },
        });
      }
    }
    const withBody = operationsOf(document).filter(([, , operation]) => 'requestBody' in operation);
    expect(withBody.length).toBeGreaterThan(0);
    for (const [, , operation] of withBody) {
      expect(operation.responses['413']).toEqual({ $ref: '#/components/responses/PayloadTooLarge' });
      expect(operation.responses['422']).toEqual({ $ref: '#/components/responses/ValidationError' });
    }
    for (const name of ['Unauthorized', 'PayloadTooLarge', 'ValidationError', 'InternalError']) {
      expect(document.components.responses[name].content['application/json'].schema.$ref).toMatch(
        /^#\/components\/schemas\/(ErrorDetail|HTTPValidationError)$/,
      );
    }
  });

  it('leaves the internal routes and their service token out of the public document only', () => {
    const internalOnly = operationsOf(internalDocument).filter(([, , operation]) => operation.tags?.includes('internal'));
    expect(internalOnly.length).toBeGreaterThan(0);
    for (const [method, route] of internalOnly) expect(document.paths[route]?.[method]).toBeUndefined();
    expect(JSON.stringify(document)).not.toContain('ServiceToken');
    expect(document.paths['/v2/deployments'].get).toBeDefined();
  });

  it('describes real answers truthfully: deployments, revisions, logs and tracing projects match their schemas', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const { apiKey } = await createTenant(db, 'openapi');
    const call = (method: 'get' | 'post', url: string) => request(app.callback())[method](url).set('X-Api-Key', apiKey);
    const expectDocumented = (method: string, route: string, status: number, body: unknown) => {
      const schema = document.paths[route][method].responses[String(status)].content['application/json'].schema;
      const valid = ajv.validate(schema, body);
      expect({ route, errors: valid ? null : ajv.errors }).toEqual({ route, errors: null });
    };

    const created = await call('post', '/v2/deployments').send({
      name: `openapi-${Date.now().toString(36)}`,
      source: 'codehost',
      source_config: { repo_url: 'https://example.com/acme/agent.git' },
      source_revision_config: {},
      secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-secret' }],
    });
    expect(created.status).toBe(201);
    expectDocumented('post', '/v2/deployments', 201, created.body);
    const { id: deploymentId, latest_revision_id: revisionId } = created.body;
    await db('revision_logs').insert({ revision_id: revisionId, level: 'info', message: 'cloning' });

    const reads: Array<[string, string]> = [
      ['/v2/deployments', '/v2/deployments'],
      ['/v2/deployments/{deployment_id}', `/v2/deployments/${deploymentId}`],
      ['/v2/deployments/{deployment_id}/revisions', `/v2/deployments/${deploymentId}/revisions`],
      ['/v2/deployments/{deployment_id}/revisions/{revision_id}', `/v2/deployments/${deploymentId}/revisions/${revisionId}`],
      [
        '/v2/deployments/{deployment_id}/revisions/{revision_id}/logs',
        `/v2/deployments/${deploymentId}/revisions/${revisionId}/logs`,
      ],
      ['/v2/deployments/{deployment_id}/logs', `/v2/deployments/${deploymentId}/logs`],
      ['/v1/projects', '/v1/projects'],
      ['/v1/projects/{project_id}', `/v1/projects/${created.body.tracing_project_id}`],
    ];
    for (const [route, url] of reads) {
      const response = await call('get', url);
      expect({ url, status: response.status }).toEqual({ url, status: 200 });
      expectDocumented('get', route, 200, response.body);
    }
  });
});
