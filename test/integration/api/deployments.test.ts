import crypto from 'node:crypto';
import type { Client } from '@temporalio/client';
import type Koa from 'koa';
import request from 'supertest';
import { createApp } from '../../../src/api/app';
import type { Db } from '../../../src/db/knex';
import { createTenant, testConfig, testDb, testSecretBox, testTemporalClient } from '../../support/env';

const validBody = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  source: 'codehost',
  source_config: { repo_url: 'https://example.com/acme/agent.git' },
  source_revision_config: {},
  secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-very-secret' }],
  ...extra,
});
const uniqueName = (prefix = 'dep') => `${prefix}-${crypto.randomBytes(4).toString('hex')}`;

describe('deployments API (CONTRACT §2.1–§2.3)', () => {
  let db: Db;
  let temporal: Client;
  let app: Koa;
  let key: string;
  let otherKey: string;
  const call = () => request(app.callback());

  beforeAll(async () => {
    db = testDb();
    temporal = await testTemporalClient();
    const config = testConfig();
    app = createApp({ config, db, secretBox: testSecretBox(config), temporal });
    key = (await createTenant(db, 'acme')).apiKey;
    otherKey = (await createTenant(db, 'globex')).apiKey;
  });
  afterAll(async () => {
    await temporal.connection.close();
    await db.destroy();
  });

  const create = (body: unknown, apiKey = key) =>
    call()
      .post('/v2/deployments')
      .set('X-Api-Key', apiKey)
      .send(body as object);

  describe('create', () => {
    it('answers 201 with the deployment, defaults filled, secrets masked, and a tracing project of the same name', async () => {
      const name = uniqueName();
      const response = await create(validBody(name));
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        name,
        source: 'codehost',
        status: 'AWAITING_DATABASE',
        url: null,
        active_revision_id: null,
        secrets: [{ name: 'OPENAI_API_KEY', value: '********' }],
        source_revision_config: { repo_ref: 'main', graphx_config_path: 'graphx.json', image_uri: null, repo_commit_sha: null },
      });
      expect(response.body.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(response.body.latest_revision_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(JSON.stringify(response.body)).not.toContain('sk-very-secret');
      const project = await db('tracing_projects').where({ id: response.body.tracing_project_id }).first();
      expect(project.name).toBe(name);
      const revision = await db('revisions').where({ id: response.body.latest_revision_id }).first();
      expect(revision.secrets_encrypted).not.toContain('sk-very-secret');
      const outbox = await db('pipeline_outbox').where({ deployment_id: response.body.id });
      expect(outbox.map((row) => row.kind)).toEqual(['enqueue_revision']);
    });

    it.each([
      ['a missing name', { ...validBody('x'), name: undefined }, ['body', 'name'], 'missing'],
      ['a name with capitals', validBody('My_App'), ['body', 'name'], 'string_pattern_mismatch'],
      ['an unknown source', validBody('ok-name', { source: 'ftp' }), ['body', 'source'], 'enum'],
      [
        'source_config that is not an object',
        validBody('ok-name', { source_config: 'x' }),
        ['body', 'source_config'],
        'dict_type',
      ],
      ['secrets that are not a list', validBody('ok-name', { secrets: 'x' }), ['body', 'secrets'], 'list_type'],
      [
        'an integration_id that is not a uuid',
        validBody('ok-name', { source_config: { repo_url: 'https://e.com/r', integration_id: 'nope' } }),
        ['body', 'source_config', 'integration_id'],
        'uuid_parsing',
      ],
      [
        'a min_scale below 1',
        validBody('ok-name', { source_config: { repo_url: 'https://e.com/r', resource_spec: { min_scale: 0 } } }),
        ['body', 'source_config', 'resource_spec', 'min_scale'],
        'greater_than_equal',
      ],
      [
        'a secret name with a dash',
        validBody('ok-name', { secrets: [{ name: 'A-B', value: 'v' }] }),
        ['body', 'secrets', 0, 'name'],
        'string_pattern_mismatch',
      ],
      [
        'a repo_ref that git would read as an option',
        validBody('ok-name', { source_revision_config: { repo_ref: '--upload-pack=touch /tmp/owned' } }),
        ['body', 'source_revision_config', 'repo_ref'],
        'string_pattern_mismatch',
      ],
    ])('rejects %s with 422 in pydantic shape', async (_label, body, loc, type) => {
      const response = await create(body);
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual(
        expect.arrayContaining([expect.objectContaining({ loc, type, msg: expect.any(String) })]),
      );
    });

    it('rejects malformed JSON with 422 json_invalid', async () => {
      const response = await call()
        .post('/v2/deployments')
        .set('X-Api-Key', key)
        .set('Content-Type', 'application/json')
        .send('{"name": ');
      expect(response.status).toBe(422);
      expect(response.body.detail[0]).toMatchObject({ loc: ['body', 0], type: 'json_invalid' });
    });

    it('rejects a body over 1 MiB with 413', async () => {
      const response = await create(validBody(uniqueName(), { secrets: [{ name: 'BIG', value: 'x'.repeat(1024 * 1024 + 10) }] }));
      expect(response.status).toBe(413);
      expect(response.body.detail).toMatch(/larger than/);
    });

    it.each([
      [
        'external_docker in cloud mode',
        { source: 'external_docker', source_config: {}, source_revision_config: { image_uri: 'r/i:1' } },
        /not available in cloud mode/,
      ],
      ['codehost without repo_url', { source_config: {} }, /repo_url is required/],
      [
        'an http repository on the internet',
        { source_config: { repo_url: 'http://example.com/r.git' } },
        /must be an https:\/\/ URL/,
      ],
      [
        'a repository URL with credentials',
        { source_config: { repo_url: 'https://user:pw@example.com/r.git' } },
        /must not embed credentials/,
      ],
      ['a reserved secret name', { secrets: [{ name: 'DATABASE_URI', value: 'x' }] }, /reserved/],
      ['a GRAPHX_ secret name', { secrets: [{ name: 'GRAPHX_SECRET_KEY', value: 'x' }] }, /reserved/],
      [
        'an unknown integration',
        { source_config: { repo_url: 'https://e.com/r', integration_id: crypto.randomUUID() } },
        /Integration .* not found/,
      ],
    ])('rejects %s with 400 and a sentence', async (_label, extra, message) => {
      const response = await create(validBody(uniqueName(), extra));
      expect(response.status).toBe(400);
      expect(response.body.detail).toMatch(message);
    });

    it('rejects a file:// repository with 400 when GRAPHX_ALLOW_FILE_REPOS is off', async () => {
      const config = testConfig({ GRAPHX_ALLOW_FILE_REPOS: '0' });
      const strictApp = createApp({ config, db, secretBox: testSecretBox(config), temporal });
      const response = await request(strictApp.callback())
        .post('/v2/deployments')
        .set('X-Api-Key', key)
        .send(validBody(uniqueName(), { source_config: { repo_url: 'file:///tmp/repo' } }));
      expect(response.status).toBe(400);
      expect(response.body.detail).toMatch(/GRAPHX_ALLOW_FILE_REPOS=1/);
    });

    it('answers 409 when the name is taken by a deployment or by a tracing project', async () => {
      const name = uniqueName();
      expect((await create(validBody(name))).status).toBe(201);
      const again = await create(validBody(name));
      expect(again.status).toBe(409);
      expect(again.body.detail).toContain(name);
      const projectName = uniqueName('proj');
      const owner = (await call().get('/v2/deployments').set('X-Api-Key', key)).body.resources[0].tenant_id;
      await db('tracing_projects').insert({ id: crypto.randomUUID(), tenant_id: owner, name: projectName });
      const clash = await create(validBody(projectName));
      expect(clash.status).toBe(409);
      expect(clash.body.detail).toBe(`There already exists a tracing project named: ${projectName}`);
    });

    it('lets two tenants use the same name', async () => {
      const name = uniqueName();
      expect((await create(validBody(name))).status).toBe(201);
      expect((await create(validBody(name), otherKey)).status).toBe(201);
    });

    it('lets two tenants create the same name at the same moment: both 201, distinct gateway paths', async () => {
      for (let round = 0; round < 8; round += 1) {
        const name = uniqueName();
        const [first, second] = await Promise.all([create(validBody(name)), create(validBody(name), otherKey)]);
        expect([first.status, second.status, first.body.detail, second.body.detail]).toEqual([201, 201, undefined, undefined]);
        const keys = await db('deployments').whereIn('id', [first.body.id, second.body.id]).pluck('route_key');
        expect(new Set(keys).size).toBe(2);
        expect(keys).toContain(name);
      }
    });
  });

  describe('read and list', () => {
    it('answers 404 naming the id for a missing deployment and for another tenant’s', async () => {
      const missing = crypto.randomUUID();
      const response = await call().get(`/v2/deployments/${missing}`).set('X-Api-Key', key);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ detail: `Deployment ID ${missing} not found.` });
      const theirs = (await create(validBody(uniqueName()), otherKey)).body.id;
      const hidden = await call().get(`/v2/deployments/${theirs}`).set('X-Api-Key', key);
      expect(hidden.status).toBe(404);
      expect(hidden.body).toEqual({ detail: `Deployment ID ${theirs} not found.` });
    });

    it('answers 422 uuid_parsing for a deployment id that is not a uuid', async () => {
      const response = await call().get('/v2/deployments/not-a-uuid').set('X-Api-Key', key);
      expect(response.status).toBe(422);
      expect(response.body.detail[0]).toMatchObject({ loc: ['path', 'deployment_id'], type: 'uuid_parsing' });
    });

    it('pages the list with limit and offset and filters by name_contains', async () => {
      const marker = crypto.randomBytes(3).toString('hex');
      for (let i = 0; i < 3; i += 1) expect((await create(validBody(`pg-${marker}-${i}`))).status).toBe(201);
      const first = await call().get(`/v2/deployments?name_contains=${marker}&limit=2`).set('X-Api-Key', key);
      expect(first.status).toBe(200);
      expect(first.body.resources).toHaveLength(2);
      expect(first.body.offset).toBe(2);
      const second = await call().get(`/v2/deployments?name_contains=${marker}&limit=2&offset=2`).set('X-Api-Key', key);
      expect(second.body.resources).toHaveLength(1);
      const names = [...first.body.resources, ...second.body.resources].map((d: { name: string }) => d.name).sort();
      expect(names).toEqual([0, 1, 2].map((i) => `pg-${marker}-${i}`));
    });

    it.each([
      ['limit=0', 'greater_than_equal'],
      ['limit=101', 'less_than_equal'],
      ['limit=abc', 'int_parsing'],
      ['offset=-1', 'greater_than_equal'],
      ['status=BROKEN', 'enum'],
    ])('rejects the list query %s with 422 %s', async (query, type) => {
      const response = await call().get(`/v2/deployments?${query}`).set('X-Api-Key', key);
      expect(response.status).toBe(422);
      expect(response.body.detail[0]).toMatchObject({ loc: ['query', query.split('=')[0]], type });
    });
  });

  describe('patch', () => {
    it('makes a new revision for a new repo_ref, keeps a secret sent as ******** and merges source_config', async () => {
      const created = (await create(validBody(uniqueName()))).body;
      const response = await call()
        .patch(`/v2/deployments/${created.id}`)
        .set('X-Api-Key', key)
        .send({
          source_config: { build_command: 'npm run build' },
          source_revision_config: { repo_ref: 'release' },
          secrets: [{ name: 'OPENAI_API_KEY', value: '********' }],
        });
      expect(response.status).toBe(200);
      expect(response.body.latest_revision_id).not.toBe(created.latest_revision_id);
      expect(response.body.source_revision_config.repo_ref).toBe('release');
      expect(response.body.source_config).toMatchObject({
        repo_url: 'https://example.com/acme/agent.git',
        build_command: 'npm run build',
      });
      const revisions = await call().get(`/v2/deployments/${created.id}/revisions`).set('X-Api-Key', key);
      expect(revisions.body.resources.map((r: { number: number }) => r.number)).toEqual([2, 1]);
      const newest = await db('revisions').where({ id: response.body.latest_revision_id }).first();
      expect(newest.source_revision_config).toMatchObject({ repo_ref: 'release', graphx_config_path: 'graphx.json' });
    });

    it.each([
      ['install_command', 'npm install --no-audit'],
      ['build_command', 'npm run build'],
    ])('makes a new revision when only source_config.%s changes, and none when it is sent unchanged', async (field, value) => {
      const created = (await create(validBody(uniqueName()))).body;
      const changed = await call()
        .patch(`/v2/deployments/${created.id}`)
        .set('X-Api-Key', key)
        .send({ source_config: { [field]: value } });
      expect(changed.status).toBe(200);
      expect(changed.body.latest_revision_id).not.toBe(created.latest_revision_id);
      const newest = await db('revisions').where({ id: changed.body.latest_revision_id }).first();
      expect(newest.source_config[field]).toBe(value);
      const repeated = await call()
        .patch(`/v2/deployments/${created.id}`)
        .set('X-Api-Key', key)
        .send({ source_config: { [field]: value } });
      expect(repeated.body.latest_revision_id).toBe(changed.body.latest_revision_id);
    });

    it('changes no revision when only plain source_config fields change', async () => {
      const created = (await create(validBody(uniqueName()))).body;
      const response = await call()
        .patch(`/v2/deployments/${created.id}`)
        .set('X-Api-Key', key)
        .send({ source_config: { build_on_push: true } });
      expect(response.status).toBe(200);
      expect(response.body.latest_revision_id).toBe(created.latest_revision_id);
      expect(response.body.source_config.build_on_push).toBe(true);
    });

    it.each([
      ['name', { name: 'another-name' }, "Field 'name' cannot be changed after creation."],
      ['source', { source: 'internal_docker' }, "Field 'source' cannot be changed after creation."],
      [
        'repo_url',
        { source_config: { repo_url: 'https://example.com/other.git' } },
        "Field 'source_config.repo_url' cannot be changed after creation.",
      ],
      [
        'a masked secret with no stored value',
        { secrets: [{ name: 'NEW_ONE', value: '********' }] },
        "Secret 'NEW_ONE' has no stored value to keep; send its value.",
      ],
    ])('rejects a change of %s with 400', async (_label, body, detail) => {
      const created = (await create(validBody(uniqueName()))).body;
      const response = await call().patch(`/v2/deployments/${created.id}`).set('X-Api-Key', key).send(body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ detail });
    });

    it('answers 404 for a missing deployment', async () => {
      const missing = crypto.randomUUID();
      const response = await call().patch(`/v2/deployments/${missing}`).set('X-Api-Key', key).send({});
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ detail: `Deployment ID ${missing} not found.` });
    });
  });

  describe('revisions', () => {
    it('answers 404 "Revision ID … not found." for a missing revision under an existing deployment', async () => {
      const created = (await create(validBody(uniqueName()))).body;
      const missing = crypto.randomUUID();
      for (const path of ['', '/logs']) {
        const response = await call().get(`/v2/deployments/${created.id}/revisions/${missing}${path}`).set('X-Api-Key', key);
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ detail: `Revision ID ${missing} not found.` });
      }
      const redeploy = await call().post(`/v2/deployments/${created.id}/revisions/${missing}/redeploy`).set('X-Api-Key', key);
      expect(redeploy.status).toBe(404);
    });

    it('reads a new revision from the database while no workflow runs it', async () => {
      const created = (await create(validBody(uniqueName()))).body;
      const response = await call()
        .get(`/v2/deployments/${created.id}/revisions/${created.latest_revision_id}`)
        .set('X-Api-Key', key);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: created.latest_revision_id,
        deployment_id: created.id,
        status: 'CREATING',
        status_message: null,
      });
    });

    it('refuses to retry a revision that has not failed with 409', async () => {
      const created = (await create(validBody(uniqueName()))).body;
      const response = await call()
        .post(`/v2/deployments/${created.id}/revisions/${created.latest_revision_id}/retry`)
        .set('X-Api-Key', key);
      expect(response.status).toBe(409);
      expect(response.body.detail).toMatch(/only a BUILD_FAILED or DEPLOY_FAILED revision can be retried/);
    });

    it('rejects a revision status filter outside the 13 values with 422', async () => {
      const created = (await create(validBody(uniqueName()))).body;
      const response = await call().get(`/v2/deployments/${created.id}/revisions?status=DEPLOYED,NOPE`).set('X-Api-Key', key);
      expect(response.status).toBe(422);
      expect(response.body.detail[0]).toMatchObject({ loc: ['query', 'status'], type: 'string_pattern_mismatch' });
    });

    it('serves empty build and app logs in the contract shape', async () => {
      const created = (await create(validBody(uniqueName()))).body;
      const logs = await call()
        .get(`/v2/deployments/${created.id}/revisions/${created.latest_revision_id}/logs?order=desc`)
        .set('X-Api-Key', key);
      expect(logs.status).toBe(200);
      expect(logs.body).toEqual({ logs: [], next_offset: null });
      const appLogs = await call().get(`/v2/deployments/${created.id}/logs`).set('X-Api-Key', key);
      expect(appLogs.body).toEqual({ logs: [], next_offset: null });
    });
  });

  describe('delete', () => {
    it('answers 204, shows AWAITING_DELETE, and refuses a second delete with 409', async () => {
      const created = (await create(validBody(uniqueName()))).body;
      const response = await call().delete(`/v2/deployments/${created.id}`).set('X-Api-Key', key);
      expect(response.status).toBe(204);
      const after = await call().get(`/v2/deployments/${created.id}`).set('X-Api-Key', key);
      expect(after.body.status).toBe('AWAITING_DELETE');
      const again = await call().delete(`/v2/deployments/${created.id}`).set('X-Api-Key', key);
      expect(again.status).toBe(409);
      const patch = await call().patch(`/v2/deployments/${created.id}`).set('X-Api-Key', key).send({ secrets: [] });
      expect(patch.status).toBe(409);
    });
  });

  describe('resource_spec policy (issue 21)', () => {
    it('names each field the process runner ignores in the create response and in the revision log', async () => {
      const response = await create(
        validBody(uniqueName(), {
          source_config: {
            repo_url: 'https://example.com/acme/agent.git',
            resource_spec: { min_scale: 2, max_scale: 6, labels: { team: 'agents' } },
          },
        }),
      );
      expect(response.status).toBe(201);
      expect(response.body.warnings).toEqual([
        expect.stringMatching(/^resource_spec\.max_scale has no effect: the process runner/),
        expect.stringMatching(/^resource_spec\.labels has no effect: the process runner/),
      ]);
      const logs = await call()
        .get(`/v2/deployments/${response.body.id}/revisions/${response.body.latest_revision_id}/logs`)
        .set('X-Api-Key', key);
      expect(logs.body.logs.map((line: { level: string; message: string }) => `${line.level} ${line.message}`)).toEqual(
        response.body.warnings.map((warning: string) => `warn ${warning}`),
      );
    });

    it('refuses a volumes entry naming a hostPath with a 422 that names it, and creates nothing', async () => {
      const name = uniqueName();
      const response = await create(
        validBody(name, {
          source_config: {
            repo_url: 'https://example.com/acme/agent.git',
            resource_spec: { volumes: [{ name: 'docker', hostPath: { path: '/var/run/docker.sock' } }] },
          },
        }),
      );
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['body', 'source_config', 'resource_spec', 'volumes', 0, 'hostPath']);
      const list = await call().get(`/v2/deployments?name_contains=${name}`).set('X-Api-Key', key);
      expect(list.body.resources).toEqual([]);
    });

    it('refuses a PATCH adding a privileged sidecar with a 422 and makes no revision', async () => {
      const created = (await create(validBody(uniqueName()))).body;
      const patch = await call()
        .patch(`/v2/deployments/${created.id}`)
        .set('X-Api-Key', key)
        .send({
          source_config: {
            resource_spec: { sidecars: [{ name: 'debug', image: 'busybox', securityContext: { privileged: true } }] },
          },
        });
      expect(patch.status).toBe(422);
      expect(patch.body.detail[0].loc).toEqual([
        'body',
        'source_config',
        'resource_spec',
        'sidecars',
        0,
        'securityContext',
        'privileged',
      ]);
      const after = await call().get(`/v2/deployments/${created.id}`).set('X-Api-Key', key);
      expect(after.body.latest_revision_id).toBe(created.latest_revision_id);
    });
  });

  describe('resource_spec policy of a control plane on Kubernetes (GRAPHX_RUNNER=kubernetes)', () => {
    let kubeApp: Koa;
    beforeAll(() => {
      const config = testConfig({
        GRAPHX_RUNNER: 'kubernetes',
        GRAPHX_KUBE_NAMESPACE: 'graphx-apps',
        GRAPHX_KUBE_NAMESPACES: 'team-a',
      });
      kubeApp = createApp({ config, db, secretBox: testSecretBox(config), temporal });
    });
    const createOnKube = (name: string, sourceConfig: Record<string, unknown>) =>
      request(kubeApp.callback())
        .post('/v2/deployments')
        .set('X-Api-Key', key)
        .send(validBody(name, { source_config: { repo_url: 'https://example.com/acme/agent.git', ...sourceConfig } }));
    const created = async (name: string) =>
      (await call().get(`/v2/deployments?name_contains=${name}`).set('X-Api-Key', key)).body.resources;

    it('accepts fields that take effect on a cluster (the queue side included) without a warning', async () => {
      const response = await createOnKube(uniqueName(), {
        resource_spec: {
          min_scale: 2,
          max_scale: 6,
          cpu: 0.5,
          labels: { team: 'agents' },
          queue_min_scale: 1,
          queue_max_scale: 4,
        },
        listener_config: { k8s_namespace: 'team-a' },
      });
      expect(response.status).toBe(201);
      expect(response.body.warnings ?? []).toEqual([]);
    });

    it.each([
      [
        "an init container mounting another namespace's service-account token",
        {
          resource_spec: {
            volumes: [{ name: 'stolen', projected: { sources: [{ secret: { name: 'graphx-token', namespace: 'graphx' } }] } }],
            init_containers: [
              {
                name: 'steal',
                image: 'busybox',
                volumeMounts: [{ name: 'stolen', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }],
              },
            ],
          },
        },
        ['body', 'source_config', 'resource_spec', 'volumes', 0, 'projected', 'sources', 0, 'secret', 'namespace'],
      ],
      [
        'a sidecar mounting a host path',
        {
          resource_spec: {
            volumes: [{ name: 'host', hostPath: { path: '/' } }],
            sidecars: [{ name: 's', image: 'busybox', volumeMounts: [{ name: 'host', mountPath: '/host' }] }],
          },
        },
        ['body', 'source_config', 'resource_spec', 'volumes', 0, 'hostPath'],
      ],
      [
        'a field without effect there (executor_*)',
        { resource_spec: { executor_cpu: 1 } },
        ['body', 'source_config', 'resource_spec', 'executor_cpu'],
      ],
      [
        'a namespace graphx does not manage',
        { listener_config: { k8s_namespace: 'kube-system' } },
        ['body', 'source_config', 'listener_config', 'k8s_namespace'],
      ],
    ])('refuses %s with a 422 naming it, and creates nothing', async (_what, sourceConfig, loc) => {
      const name = uniqueName();
      const response = await createOnKube(name, sourceConfig);
      expect(response.status).toBe(422);
      expect(response.body.detail.map((issue: { loc: unknown[] }) => issue.loc)).toContainEqual(loc);
      expect(await created(name)).toEqual([]);
    });
  });
});
