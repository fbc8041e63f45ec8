/**
 * deploy/kubernetes/base gives the API and the workers a configuration graphx starts with (issue 21, point 3): the
 * ConfigMap, each container's own env and the Secret's three keys, read by loadConfig as the pods would read them.
 */
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { loadConfig } from '../../../src/config';

const BASE = path.resolve(__dirname, '..', '..', '..', 'deploy', 'kubernetes', 'base');
const read = (file: string) => yaml.loadAll(fs.readFileSync(path.join(BASE, file), 'utf8')) as any[];

function podEnvironment(file: string): Record<string, string> {
  const [config] = read('config.yaml');
  const deployment = read(file).find((object) => object.kind === 'Deployment');
  const container = deployment.spec.template.spec.containers[0];
  const own = Object.fromEntries((container.env as Array<{ name: string; value: string }>).map((e) => [e.name, e.value]));
  return {
    // The image's ENV (Dockerfile), then the ConfigMap and Secret (envFrom), then the container's env.
    GRAPHX_DATA_DIR: '/var/lib/graphx',
    GRAPHX_HOST: '0.0.0.0',
    ...config.data,
    DATABASE_URL: 'postgres://graphx:secret@postgres.db:5432/graphx',
    TEMPORAL_ADDRESS: 'temporal-frontend.temporal:7233',
    GRAPHX_SECRET_KEY: 'ab'.repeat(32),
    ...own,
  };
}

test('the API pod reads a Kubernetes configuration and runs no worker (GRAPHX_WORKER_QUEUES empty)', () => {
  const config = loadConfig(podEnvironment('api.yaml'));
  expect(config.runner).toBe('kubernetes');
  expect(config.workerQueues).toEqual([]);
  expect(config.kube?.registry.repository).toBe('registry.example.com/graphx/apps');
  expect(config.kube?.managedNamespaces).toEqual(['graphx-apps']);
});

test('the worker pods poll the control queue only: they build nothing, so they need no container engine', () => {
  const config = loadConfig(podEnvironment('worker.yaml'));
  expect(config.runner).toBe('kubernetes');
  expect(config.workerQueues).toEqual(['control']);
});
