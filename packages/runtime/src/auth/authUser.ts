/** The authenticated caller of a runtime request. */
export interface AuthUser {
  identity: string;
  display_name: string;
  is_authenticated: boolean;
  permissions: string[];
  kind?: string;
  [field: string]: unknown;
}

/** What the auth middleware leaves in `ctx.state.auth`. */
export interface RequestAuth {
  /** Null in `graphx dev` without custom auth: nobody is identified. */
  user: AuthUser | null;
}

/** A user of the debugging UI, admitted only with a valid control-plane key (`isStudioUser` recognises `kind`). */
export function studioUser(owner: string): AuthUser {
  return { kind: 'StudioUser', identity: owner, display_name: owner, is_authenticated: true, permissions: ['authenticated'] };
}

/** Normalises what `authenticate` returned, as the anchors do: a string, or an object with a string `identity`. */
export function normaliseAuthResult(result: unknown): AuthUser {
  if (typeof result === 'string') {
    return { identity: result, display_name: result, is_authenticated: true, permissions: [] };
  }
  const object = result as Record<string, unknown> | null;
  if (object && typeof object === 'object' && typeof object.identity === 'string') {
    const permissions = Array.isArray(object.permissions) ? (object.permissions as string[]) : [];
    return {
      ...object,
      identity: object.identity,
      permissions,
      is_authenticated: typeof object.is_authenticated === 'boolean' ? object.is_authenticated : true,
      display_name: typeof object.display_name === 'string' ? object.display_name : object.identity,
    };
  }
  throw new Error('Invalid auth response received: authenticate must return a string or an object with an identity');
}
