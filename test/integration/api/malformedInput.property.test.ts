/**
 * Property: whatever arrives at any route of the control-plane API (every route of its OpenAPI description, the
 * internal ones included), the answer is never a 5xx, every error is `{"detail": ...}` JSON, and the status is one the
 * description documents for that operation. Real PostgreSQL and HTTP over loopback; bounded by count and time.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import fc from 'fast-check';
import { buildApi } from '../../../src/api/app';
import { answerClientErrorsWithJson } from '@graphx/kit/http/clientErrors';
import { buildOpenApi } from '../../../src/api/openapi';
import type { Db } from '../../../src/db/knex';
import { createTenant, testConfig, testDb, testSecretBox, testTemporalClient } from '../../support/env';
import {
  FuzzViolations,
  bodyText,
  closeFuzzAgent,
  contentType,
  encodeSegment,
  fuzzParameters,
  methodFor,
  queryString,
  send,
  shapeViolation,
  urlString,
  valueFor,
  type RawRequest,
} from '../../support/fuzz';
import { seedDeployment } from '../../../packages/runtime/test/integration/support/runtimeHarness';

interface Operation {
  method: string;
  path: string;
  secured: 'apiKey' | 'service' | 'none';
  pathParams: string[];
  query: Array<{ name: string; schema: any }>;
  body: any;
  documented: Set<number>;
}

/** Every operation of the document, as the test drives it. */
function operationsOf(document: any): Operation[] {
  return Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method,
      path,
      secured: operation.security?.[0]?.ApiKeyAuth ? 'apiKey' : operation.security?.[0]?.ServiceToken ? 'service' : 'none',
      pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string),
      query: (operation.parameters ?? [])
        .filter((parameter: any) => parameter.in === 'query')
        .map((parameter: any) => ({ name: parameter.name, schema: parameter.schema })),
      body: operation.requestBody?.content?.['application/json']?.schema,
      documented: new Set(Object.keys(operation.responses).map(Number)),
    })),
  ) as Operation[];
}

const TIME_LIMIT_MS = 20_000;
const RUNS = 1_500;

describe('the control-plane API under malformed input (property-based, bounded)', () => {
  let db: Db;
  let temporal: Client;
  let server: http.Server;
  let baseUrl: string;
  let operations: Operation[];
  let apiKey: string;
  let serviceToken: string;
  let deploymentId: string;

  beforeAll(async () => {
    db = testDb();
    temporal = await testTemporalClient();
    const config = testConfig();
    const { app, registry } = buildApi({ config, db, secretBox: testSecretBox(config), temporal });
    operations = operationsOf(buildOpenApi(registry, { includeInternal: true }));
    server = http.createServer(app.callback());
    answerClientErrorsWithJson(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tenant = await createTenant(db, 'fuzz');
    apiKey = tenant.apiKey;
    ({ serviceToken, deploymentId } = await seedDeployment(db, tenant.tenantId));
  });
  afterAll(async () => {
    closeFuzzAgent();
    await new Promise((resolve) => server.close(resolve));
    await temporal.connection.close();
    await db.destroy();
  });

  it('derives its routes from the OpenAPI description, internal routes included', () => {
    const paths = operations.map((operation) => `${operation.method} ${operation.path}`);
    expect(paths).toEqual(expect.arrayContaining(['post /v2/deployments', 'post /internal/v1/runs']));
  });

  it('answers every route with a documented status and a {"detail"} body, never a 5xx', async () => {
    const requestFor = (operation: Operation): fc.Arbitrary<{ request: RawRequest; operation: Operation }> => {
      // An empty segment is another URL (another route or a 404), not a bad parameter.
      const idValue = fc.oneof(
        { weight: 3, arbitrary: fc.constant(deploymentId) },
        { weight: 2, arbitrary: fc.uuid() },
        { weight: 3, arbitrary: urlString.filter((text) => text !== '') },
      );
      const credentials = fc.oneof(
        { weight: 8, arbitrary: fc.constant('valid') },
        { weight: 1, arbitrary: fc.constantFrom('none', 'wrong') },
      );
      const queryValue = (name: string) => {
        const schema = operation.query.find((parameter) => parameter.name === name)?.schema;
        return fc.oneof(
          valueFor(schema).map((value) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))),
          urlString,
        );
      };
      return fc
        .record({
          method: methodFor(operation.method),
          params: fc.tuple(...operation.pathParams.map(() => idValue)),
          query: queryString(
            operation.query.map((parameter) => parameter.name),
            queryValue,
          ),
          body: bodyText(operation.body),
          contentType,
          credentials,
        })
        .map(({ method, params, query, body, contentType: type, credentials: which }) => {
          let path = operation.path;
          operation.pathParams.forEach((name, index) => {
            path = path.replace(`{${name}}`, encodeSegment(params[index] as string));
          });
          const headers: Record<string, string> = {};
          if (type) headers['content-type'] = type;
          if (which !== 'none') {
            const secret = which === 'valid' ? (operation.secured === 'service' ? serviceToken : apiKey) : 'gx_wrong';
            if (operation.secured === 'service') headers.authorization = `Bearer ${secret}`;
            else headers['x-api-key'] = secret;
          }
          const withBody = !['GET', 'HEAD'].includes(method) && body !== undefined;
          if (withBody) headers['content-length'] = String(Buffer.byteLength(body));
          return { request: { method, path: path + query, headers, body: withBody ? body : undefined }, operation };
        });
    };

    const violations = new FuzzViolations();
    const property = fc.asyncProperty(fc.oneof(...operations.map(requestFor)), async ({ request, operation }) => {
      const response = await send(baseUrl, request);
      const kind = `${request.method} ${operation.path} → ${response.status}`;
      if (request.method === 'HEAD') {
        if (response.status >= 500) violations.add(kind, request, `answered ${response.status}`);
        return;
      }
      const violation = shapeViolation(response);
      if (violation) violations.add(kind, request, violation);
      const sameMethod = request.method === operation.method.toUpperCase();
      // Another method of the same path: that method's own operation when the path has one (DELETE of a deployment
      // driven from its GET), else the router's 405 (200 for OPTIONS).
      const sibling = operations.find((other) => other.path === operation.path && other.method.toUpperCase() === request.method);
      const allowed = new Set([...operation.documented, ...(sameMethod ? [] : (sibling?.documented ?? [200, 405]))]);
      allowed.add(431); // Node's own answer to a request line over 16 KiB, before any route
      if (!allowed.has(response.status)) {
        violations.add(
          kind,
          request,
          `undocumented status (documented: ${[...allowed].join(', ')}): ${response.text.slice(0, 200)}`,
        );
      }
    });
    const details = await fc.check(property, fuzzParameters(RUNS, TIME_LIMIT_MS));
    violations.assertNone(details);
  });
});
