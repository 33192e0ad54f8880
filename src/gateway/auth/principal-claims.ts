import type { JWTPayload } from 'jose';
import { AuthInvalidTokenError } from '../../core/errors/index.js';
import { isValidSessionId } from '../../fleet/session-id.js';
import type { Principal, Scope } from '../principal.js';

const SCOPES: readonly Scope[] = ['read', 'write', 'admin'];
const MAX_SESSION_PATTERNS = 1000;

/**
 * The principal a verified token's claims describe: `scope` (required), `tenant` (required unless
 * admin), `sessions` (exact ids or `prefix*`, optional), `sub`. Throws `auth.invalid_token` naming the bad claim.
 */
export function principalFromClaims(claims: JWTPayload): Principal {
  const scope = claims['scope'];
  if (typeof scope !== 'string' || !(SCOPES as readonly string[]).includes(scope)) {
    throw new AuthInvalidTokenError('token claim "scope" must be read, write or admin');
  }
  const tenant = claims['tenant'];
  if (tenant !== undefined && (typeof tenant !== 'string' || !isValidSessionId(tenant))) {
    throw new AuthInvalidTokenError('token claim "tenant" must be 1 to 128 of A-Z a-z 0-9 _ . : -');
  }
  if (tenant === undefined && scope !== 'admin') throw new AuthInvalidTokenError('token claim "tenant" is required unless scope is admin');
  return {
    subject: typeof claims.sub === 'string' ? claims.sub : null,
    tenant: tenant ?? null,
    scope: scope as Scope,
    sessions: sessionPatterns(claims['sessions']),
  };
}

function sessionPatterns(value: unknown): readonly string[] | null {
  if (value === undefined) return null;
  const valid =
    Array.isArray(value) &&
    value.length <= MAX_SESSION_PATTERNS &&
    value.every((pattern) => typeof pattern === 'string' && pattern.length > 0 && pattern.length <= 129);
  if (!valid) throw new AuthInvalidTokenError(`token claim "sessions" must be an array of at most ${MAX_SESSION_PATTERNS} session ids or prefixes ending in *`);
  return Object.freeze([...(value as string[])]);
}
