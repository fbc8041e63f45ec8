/**
 * A 422's `loc` names a path parameter exactly as the OpenAPI description names it (snake_case, as FastAPI answers),
 * for every route of the description: the table is derived from the document, so a new route cannot be missed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { buildApi } from '../../../src/api/app';
import { buildOpenApi } from '../../../src/api/openapi';
import type { Db } from '../../../src/db/knex';
import { createTenant, testConfig, testDb, testSecretBox, testTemporalClient } from '../../support/env';

interface PathCase {
  method: string;
  path: string;
  parameter: string;
  secured: 'apiKey' | 'service' | 'none';
}

function isFreeText(schema: any): boolean {
  return schema?.type === 'string' && !schema.format && !schema.pattern && !schema.enum;
}

/** One case per (operation, path parameter) of the document. */
function pathCasesOf(document: any): PathCase[] {
  return Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    Object.entries(methods).flatMap(([method, operation]) =>
      (operation.parameters ?? [])
        // A free path tail (the studio's `app_path`: any agent-server path) has no malformed value to send.
        .filter((parameter: any) => parameter.in === 'path' && !isFreeText(parameter.schema))
        .map((parameter: any) => ({
          method,
          path,
          parameter: parameter.name as string,
          secured: operation.security?.[0]?.ApiKeyAuth ? 'apiKey' : operation.security?.[0]?.ServiceToken ? 'service' : 'none',
        })),
    ),
  );
}

describe('422 loc names the parameters as the API documents them', () => {
  let db: Db;
  let temporal: Client;
  let server: http.Server;
  let baseUrl: string;
  let apiKey: string;
  let cases: PathCase[];
  let queryCases: Array<{ path: string; parameter: string }>;

  beforeAll(async () => {
    db = testDb();
    temporal = await testTemporalClient();
    const config = testConfig();
    const { app, registry } = buildApi({ config, db, secretBox: testSecretBox(config), temporal });
    const document = buildOpenApi(registry, { includeInternal: true });
    cases = pathCasesOf(document);
    queryCases = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
      (methods.get?.parameters ?? [])
        .filter((parameter: any) => parameter.in === 'query' && parameter.schema?.type === 'integer')
        .map((parameter: any) => ({ path, parameter: parameter.name as string })),
    );
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    apiKey = (await createTenant(db, 'loc')).apiKey;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await temporal.connection.close();
    await db.destroy();
  });

  it('documents every path and query parameter in snake_case', () => {
    expect(cases.length).toBeGreaterThan(10);
    for (const { path, parameter } of [...cases, ...queryCases]) {
      expect(`${path} ${parameter}`).toMatch(/ [a-z][a-z0-9_]*$/);
    }
  });

  it('answers a malformed path parameter with loc ["path", <its documented name>] on every route', async () => {
    const failures: string[] = [];
    for (const testCase of cases.filter((each) => each.secured === 'apiKey')) {
      // Valid ids everywhere except the parameter under test, which gets a value no id schema accepts.
      const url = testCase.path.replace(/\{([^}]+)\}/g, (_whole, name: string) =>
        name === testCase.parameter ? 'NOT%20an%20id!' : '00000000-0000-4000-8000-000000000000',
      );
      const response = await fetch(`${baseUrl}${url}`, {
        method: testCase.method.toUpperCase(),
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: ['get', 'delete'].includes(testCase.method) ? undefined : '{}',
      });
      const body = (await response.json()) as { detail: Array<{ loc: unknown[] }> };
      const locs = Array.isArray(body.detail) ? body.detail.map((entry) => JSON.stringify(entry.loc)) : [];
      if (response.status !== 422 || !locs.includes(JSON.stringify(['path', testCase.parameter]))) {
        failures.push(
          `${testCase.method.toUpperCase()} ${testCase.path} (${testCase.parameter}): ${response.status} ${locs.join(' ')}`,
        );
      }
    }
    expect(failures).toEqual([]);
  });

  it('answers a malformed integer query parameter with loc ["query", <its documented name>]', async () => {
    expect(queryCases.length).toBeGreaterThan(0);
    const failures: string[] = [];
    for (const { path, parameter } of queryCases) {
      const url = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      const response = await fetch(`${baseUrl}${url}?${parameter}=not-a-number`, { headers: { 'x-api-key': apiKey } });
      const body = (await response.json()) as { detail: Array<{ loc: unknown[] }> };
      const locs = Array.isArray(body.detail) ? body.detail.map((entry) => JSON.stringify(entry.loc)) : [];
      if (response.status !== 422 || !locs.includes(JSON.stringify(['query', parameter]))) {
        failures.push(`GET ${path} ?${parameter}: ${response.status} ${locs.join(' ')}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
