/**
 * The OAuth `state`: `<payload>.<signature>`, the payload naming the attempt (`auth_id`), its provider and its expiry.
 * The signature (HMAC from SecretBox) stops forged or edited states before any database read; single use and expiry
 * are enforced again on the attempt row, which is the authority.
 */
import crypto from 'node:crypto';
import type { SecretBox } from '../security/secretBox';

export interface StatePayload {
  authId: string;
  providerPk: string;
  expiresAt: number;
}

const PURPOSE = 'graphx-oauth-state-v1';

/** Encodes and signs a state for an attempt. */
export function encodeState(secretBox: SecretBox, payload: StatePayload): string {
  const body = Buffer.from(JSON.stringify({ a: payload.authId, p: payload.providerPk, e: payload.expiresAt })).toString(
    'base64url',
  );
  return `${body}.${secretBox.sign(`${PURPOSE}:${body}`)}`;
}

/** Returns the payload of a state we signed, or null for anything else (no hint of why, on purpose). */
export function decodeState(secretBox: SecretBox, state: string): StatePayload | null {
  const [body, signature, extra] = state.split('.');
  if (!body || !signature || extra !== undefined) return null;
  const expected = Buffer.from(secretBox.sign(`${PURPOSE}:${body}`));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) return null;
  try {
    const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { a?: unknown; p?: unknown; e?: unknown };
    if (typeof parsed.a !== 'string' || typeof parsed.p !== 'string' || typeof parsed.e !== 'number') return null;
    return { authId: parsed.a, providerPk: parsed.p, expiresAt: parsed.e };
  } catch {
    return null;
  }
}

/** A PKCE pair (RFC 7636): a 43-character verifier and its S256 challenge. */
export function createPkcePair(): { verifier: string; challenge: string } {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}
