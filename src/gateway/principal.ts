/**
 * Who is calling the gateway, as its bearer token says (docs/gateway.md, "Auth"). With
 * `GATEWAY_AUTH=none` (loopback only) every request is the {@link LOOPBACK_PRINCIPAL}.
 */
export type Scope = 'read' | 'write' | 'admin';

export interface Principal {
  /** The token's `sub`, for logs and rate limits; null when it has none. */
  subject: string | null;
  /** The tenant the caller acts for; null only for an `admin` token without a tenant (every tenant). */
  tenant: string | null;
  /** `read` ⊂ `write` ⊂ `admin`. */
  scope: Scope;
  /** The session ids the token may touch: exact ids, or prefixes ending in `*`. Null: every session of its tenant. */
  sessions: readonly string[] | null;
}

/** The caller when auth is off: an admin of every tenant. */
export const LOOPBACK_PRINCIPAL: Principal = Object.freeze({ subject: null, tenant: null, scope: 'admin', sessions: null });

const RANK: Record<Scope, number> = { read: 0, write: 1, admin: 2 };

/** True when the principal's scope includes `needed`. */
export function hasScope(principal: Principal, needed: Scope): boolean {
  return RANK[principal.scope] >= RANK[needed];
}

/** True when the token's `sessions` claim (if any) names this id, exactly or by a `prefix*`. */
export function coversSessionId(principal: Principal, sessionId: string): boolean {
  if (principal.sessions === null) return true;
  return principal.sessions.some((pattern) => (pattern.endsWith('*') ? sessionId.startsWith(pattern.slice(0, -1)) : sessionId === pattern));
}

/** True when the principal may see a session of this tenant (an admin without a tenant sees every tenant). */
export function coversTenant(principal: Principal, tenant: string): boolean {
  return principal.tenant === null || principal.tenant === tenant;
}
