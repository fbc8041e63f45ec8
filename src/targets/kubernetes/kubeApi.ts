/**
 * The Kubernetes API as graphx uses it: server-side apply under one field manager, get, list and delete by label,
 * watches and pod logs, on plain JSON objects. Credentials, TLS and kubeconfig handling (contexts, client
 * certificates, tokens, exec and OIDC plugins, in-cluster service accounts) are `@kubernetes/client-node`'s
 * KubeConfig, and watches its Watch; requests are made here on one keep-alive agent, so an apply sends exactly the
 * object built (the library's typed serializer would drop fields its models do not know, e.g. of newer API versions
 * or CRDs such as HTTPRoute).
 */
import https from 'node:https';
import http from 'node:http';
import { delimiter as pathDelimiter } from 'node:path';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { FIELD_MANAGER } from './names';
import type { KubeObject } from './objects/types';

/** A refusal or failure of the API server, with its HTTP status and `reason` (NotFound, Conflict, Forbidden, …). */
export class KubeApiError extends Error {
  override name = 'KubeApiError';
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

const PLURALS: Record<string, string> = {
  Ingress: 'ingresses',
  NetworkPolicy: 'networkpolicies',
  HorizontalPodAutoscaler: 'horizontalpodautoscalers',
  HTTPRoute: 'httproutes',
  StatefulSet: 'statefulsets',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
};
const CLUSTER_SCOPED = new Set(['Namespace', 'Node', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition']);

/** The collection path of a kind: `/api/v1/namespaces/<ns>/secrets`, `/apis/apps/v1/namespaces/<ns>/deployments`. */
export function collectionPath(apiVersion: string, kind: string, namespace?: string): string {
  const root = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const plural = PLURALS[kind] ?? `${kind.toLowerCase()}s`;
  const scoped = CLUSTER_SCOPED.has(kind) || !namespace ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  return `${root}${scoped}/${plural}`;
}

export function objectPath(object: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): string {
  return `${collectionPath(object.apiVersion, object.kind, object.metadata.namespace)}/${encodeURIComponent(object.metadata.name)}`;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** Abandon the request after this long (default 30 s). */
  timeoutMs?: number;
}

export class KubeApi {
  private agent: https.Agent | http.Agent | null = null;
  readonly server: string;

  constructor(readonly config: KubeConfig) {
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new Error('The kubeconfig names no current cluster.');
    this.server = cluster.server.replace(/\/+$/, '');
  }

  /**
   * `kubeconfig` (a path list, merged as kubectl merges KUBECONFIG), else KUBECONFIG, ~/.kube/config or in-cluster
   * credentials (the library's default order); `context` picks a kubeconfig context.
   */
  static load(context: string | null = null, kubeconfig: string | null = null): KubeApi {
    const config = new KubeConfig();
    const files = (kubeconfig ?? '').split(pathDelimiter).filter(Boolean);
    if (files.length === 0) config.loadFromDefault();
    for (const [index, file] of files.entries()) {
      if (index === 0) config.loadFromFile(file);
      else {
        const more = new KubeConfig();
        more.loadFromFile(file);
        config.mergeConfig(more);
      }
    }
    if (context) config.setCurrentContext(context);
    return new KubeApi(config);
  }

  static fromFile(file: string): KubeApi {
    const config = new KubeConfig();
    config.loadFromFile(file);
    return new KubeApi(config);
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(this.server + path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const requestOptions: https.RequestOptions = { method, headers: {} };
    await this.config.applyToHTTPSOptions(requestOptions);
    const secure = url.protocol === 'https:';
    this.agent ??= secure
      ? new https.Agent({
          keepAlive: true,
          maxSockets: 32,
          ca: requestOptions.ca,
          cert: requestOptions.cert,
          key: requestOptions.key,
          rejectUnauthorized: requestOptions.rejectUnauthorized,
          servername: requestOptions.servername,
        })
      : new http.Agent({ keepAlive: true, maxSockets: 32 });
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = { ...(requestOptions.headers as Record<string, string>), Accept: 'application/json' };
    if (body !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const transport = secure ? https : http;
    return new Promise<T>((resolve, reject) => {
      const request = transport.request(
        url,
        { ...requestOptions, method, headers, agent: this.agent ?? undefined },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = response.statusCode ?? 0;
            let parsed: any = text;
            if ((response.headers['content-type'] ?? '').includes('json') && text) parsed = safeJson(text);
            if (status >= 200 && status < 300) return resolve(parsed as T);
            const reason = typeof parsed === 'object' && parsed?.reason ? String(parsed.reason) : String(status);
            const message = typeof parsed === 'object' && parsed?.message ? String(parsed.message) : text.slice(0, 500);
            reject(new KubeApiError(status, reason, `${method} ${path}: ${message}`));
          });
        },
      );
      request.setTimeout(options.timeoutMs ?? 30_000, () => request.destroy(new Error(`${method} ${path}: no answer in time`)));
      request.on('error', reject);
      if (body !== undefined) request.write(body);
      request.end();
    });
  }

  /** Server-side apply of `object` under `fieldManager` (graphx's by default), taking over conflicting fields. */
  apply(object: KubeObject, fieldManager = FIELD_MANAGER): Promise<KubeObject> {
    return this.request('PATCH', objectPath(object), {
      query: { fieldManager, force: true },
      body: object,
      contentType: 'application/apply-patch+yaml',
    });
  }

  async get(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<KubeObject | null> {
    try {
      return await this.request('GET', `${collectionPath(apiVersion, kind, namespace)}/${encodeURIComponent(name)}`);
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 404) return null;
      throw error;
    }
  }

  async list(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    query: { labelSelector?: string; fieldSelector?: string } = {},
  ): Promise<KubeObject[]> {
    const result = await this.request<{ items?: KubeObject[] }>('GET', collectionPath(apiVersion, kind, namespace), { query });
    return (result.items ?? []).map((item) => ({ ...item, apiVersion, kind }));
  }

  /** Deletes `name`; a missing object is fine. Dependents (ReplicaSets, Pods) go by the garbage collector. */
  async delete(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<void> {
    try {
      await this.request('DELETE', `${collectionPath(apiVersion, kind, namespace)}/${encodeURIComponent(name)}`, {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' },
      });
    } catch (error) {
      if (!(error instanceof KubeApiError && error.status === 404)) throw error;
    }
  }

  /** Deletes every object of a kind matching `labelSelector` in one request. */
  async deleteCollection(apiVersion: string, kind: string, namespace: string, labelSelector: string): Promise<void> {
    try {
      await this.request('DELETE', collectionPath(apiVersion, kind, namespace), {
        query: { labelSelector },
        body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' },
      });
    } catch (error) {
      // A kind the cluster does not serve (no Gateway API) holds nothing of ours.
      if (!(error instanceof KubeApiError && error.status === 404)) throw error;
    }
  }

  /**
   * Watches a collection from `resourceVersion`; `onEvent` gets each ADDED/MODIFIED/DELETED object. Resolves with a
   * function that stops it; `onEnd` is called when the server ends the watch (or it fails).
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: string, object: KubeObject) => void,
    onEnd: (error: unknown) => void,
  ): Promise<() => void> {
    const controller = await new Watch(this.config).watch(path, query, (type, object) => onEvent(type, object), onEnd);
    return () => controller.abort();
  }

  /**
   * What a container printed, as its kubelet serves it through the API server (`timestamps`: each line starts with
   * its RFC 3339 time; `limitBytes` caps the answer from the oldest line on; `tailLines` keeps the newest).
   * @throws KubeApiError when the pod is gone (404), its container has not started (400) or its node does not answer.
   */
  async podLog(
    namespace: string,
    pod: string,
    container: string,
    options: { tailLines?: number; limitBytes?: number; previous?: boolean; timestamps?: boolean } = {},
  ): Promise<string> {
    const { tailLines, limitBytes, previous, timestamps } = options;
    const text = await this.request<unknown>('GET', `/api/v1/namespaces/${namespace}/pods/${pod}/log`, {
      query: { container, tailLines, limitBytes, previous, timestamps },
      timeoutMs: 5_000,
    });
    return typeof text === 'string' ? text : '';
  }

  /** The last lines a container printed (`previous`: of its last terminated run); null when the node cannot say. */
  async podLogs(
    namespace: string,
    pod: string,
    container: string,
    options: { tailLines?: number; previous?: boolean; timestamps?: boolean } = {},
  ): Promise<string | null> {
    return this.podLog(namespace, pod, container, { ...options, tailLines: options.tailLines ?? 20 }).catch(() => null);
  }

  close(): void {
    this.agent?.destroy();
    this.agent = null;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
