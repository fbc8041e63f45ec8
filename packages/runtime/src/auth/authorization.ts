/**
 * Authorization handlers of a custom `Auth` (`@langchain/langgraph-sdk/auth`): one handler per event, resolved
 * `resource:action` → `resource` → `*:action` → `*`. `false` is 403; an object is a metadata filter
 * (`value`, `{$eq}`, `{$contains}`, keys ANDed). Filters become one JSONB containment object, so the database
 * applies them with `metadata @> filter`.
 */
import { ForbiddenError } from '@graphx/kit/errors';
import type { AuthUser } from './authUser';

export type AuthFilter = Record<string, unknown>;

export type AuthorizationCallback = (request: {
  event: string;
  resource: string;
  action: string;
  value: Record<string, unknown>;
  user: AuthUser;
  permissions: string[];
}) => unknown;

/** Picks the handler for `resource:action`, or undefined when none applies. */
export function findHandler(
  callbacks: Record<string, AuthorizationCallback> | undefined,
  resource: string,
  action: string,
): AuthorizationCallback | undefined {
  if (!callbacks) return undefined;
  return callbacks[`${resource}:${action}`] ?? callbacks[resource] ?? callbacks[`*:${action}`] ?? callbacks['*'];
}

/**
 * Runs the handler for the event; it may mutate `value` (e.g. stamp `value.metadata.owner`).
 * @returns the containment filter to apply (`{}`: no restriction).
 * @throws ForbiddenError when the handler returns false.
 */
export async function authorize(
  callbacks: Record<string, AuthorizationCallback> | undefined,
  user: AuthUser,
  resource: string,
  action: string,
  value: Record<string, unknown>,
): Promise<AuthFilter> {
  const handler = findHandler(callbacks, resource, action);
  if (!handler) return {};
  const result = await handler({ event: `${resource}:${action}`, resource, action, value, user, permissions: user.permissions });
  if (result === false) throw new ForbiddenError('Forbidden');
  if (result === undefined || result === null || result === true) return {};
  if (typeof result !== 'object') throw new Error(`Authorization handler for ${resource}:${action} returned ${typeof result}`);
  return toContainment(result as Record<string, unknown>);
}

/** `{k: v}`, `{k: {$eq: v}}`, `{k: {$contains: v}}` → a JSONB object that `metadata @>` it iff all hold. */
export function toContainment(filter: Record<string, unknown>): AuthFilter {
  const containment: AuthFilter = {};
  for (const [key, condition] of Object.entries(filter)) {
    if (condition !== null && typeof condition === 'object' && !Array.isArray(condition)) {
      const operators = condition as Record<string, unknown>;
      if ('$eq' in operators) containment[key] = operators.$eq;
      else if ('$contains' in operators) {
        containment[key] = Array.isArray(operators.$contains) ? operators.$contains : [operators.$contains];
      } else containment[key] = condition;
    } else {
      containment[key] = condition;
    }
  }
  return containment;
}

/** JSONB containment in memory (for resources that are not in the database, such as system assistants). */
export function contains(document: unknown, filter: unknown): boolean {
  if (filter === null || typeof filter !== 'object') return document === filter;
  if (Array.isArray(filter)) {
    return Array.isArray(document) && filter.every((wanted) => document.some((item) => contains(item, wanted)));
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) return false;
  return Object.entries(filter).every(([key, wanted]) => contains((document as Record<string, unknown>)[key], wanted));
}
