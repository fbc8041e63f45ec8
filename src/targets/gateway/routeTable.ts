/**
 * The gateway's routes: which instance ports serve a deployment, read from `local_instances` (status `serving`) by the
 * deployment's gateway path (route_key) or by the host of its custom_url, and cached for a moment (`ttlMs`).
 */
import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import { customUrlHostSql } from '../../db/migrations/20261125000200_custom_url_host';

export interface Route {
  exists: boolean;
  ports: number[];
  readAt: number;
  /** The deployment's gateway path (route_key), for metrics and messages. */
  name: string;
  /** Scheme of the deployment's custom_url, for a route found by host. */
  scheme?: string;
}

/** The host of a deployment's custom_url (over deployments `d`), as the unique index computes it. */
const CUSTOM_URL_HOST = customUrlHostSql('d');

export class RouteTable {
  private readonly cache = new Map<string, Route>();
  private readonly turns = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly ttlMs: number,
  ) {}

  /** The route of the deployment whose gateway path (route_key) is `name`. */
  async get(name: string, fresh = false): Promise<Route> {
    return this.read(`name:${name}`, fresh, (query) => query.whereRaw('coalesce(d.route_key, d.name) = ?', [name]), name);
  }

  /**
   * The route of the deployment whose `custom_url` names this host (the request's Host without its port), or one
   * that does not exist. The host is compared case-insensitively; the API keeps custom_url hosts unique.
   */
  async getByHost(hostname: string, fresh = false): Promise<Route> {
    return this.read(`host:${hostname}`, fresh, (query) => query.whereRaw(`${CUSTOM_URL_HOST} = ?`, [hostname]), null);
  }

  private async read(
    key: string,
    fresh: boolean,
    where: (query: Knex.QueryBuilder) => Knex.QueryBuilder,
    name: string | null,
  ): Promise<Route> {
    const cached = this.cache.get(key);
    // Only a route with instances is reused: "nothing serves" is re-read, so a restored deployment answers at once. A
    // host no deployment claims is remembered too (every request by an address or unknown name asks for it first).
    const reusable = cached && (cached.ports.length > 0 || (!cached.exists && name === null));
    if (!fresh && reusable && Date.now() - cached.readAt < this.ttlMs) return cached;
    const rows: Array<{ id: string; port: number | null; route: string; custom_url: string | null }> = await where(
      this.db('deployments as d').leftJoin('local_instances as i', function joinServing() {
        this.on('i.deployment_id', '=', 'd.id').andOnVal('i.status', '=', 'serving');
      }),
    )
      .whereNull('d.deleted_at')
      .orderBy([{ column: 'd.created_at' }, { column: 'i.created_at' }])
      .select(
        'd.id',
        'i.port',
        this.db.raw('coalesce(d.route_key, d.name) as route'),
        this.db.raw("d.source_config->>'custom_url' as custom_url"),
      );
    const owner = rows[0]?.id;
    const route: Route = {
      exists: rows.length > 0,
      ports: rows.filter((row) => row.id === owner && row.port !== null).map((row) => row.port as number),
      readAt: Date.now(),
      name: name ?? rows[0]?.route ?? '',
      scheme: /^https:/i.test(rows[0]?.custom_url ?? '') ? 'https' : 'http',
    };
    this.cache.set(key, route);
    return route;
  }

  /** The next port in round-robin order, skipping `failed` ones. */
  pick(name: string, route: Route, failed: Set<number>): number | null {
    const candidates = route.ports.filter((port) => !failed.has(port));
    if (candidates.length === 0) return null;
    const turn = this.turns.get(name) ?? 0;
    this.turns.set(name, turn + 1);
    return candidates[turn % candidates.length] as number;
  }
}
