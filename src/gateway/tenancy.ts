import type { SessionRecord } from '../core/session-types.js';
import { AuthForbiddenError } from '../core/errors/index.js';
import type { Principal } from './principal.js';

/** The tenant a session without one belongs to. */
export const DEFAULT_TENANT = 'default';

/** The session's tenant (`default` for rows written before tenants existed). */
export function sessionTenant(session: SessionRecord): string {
  return (session as SessionRecord & { tenant?: string }).tenant ?? DEFAULT_TENANT;
}

/**
 * The tenant a session the caller creates belongs to: the token's; a body `tenant` that differs is
 * `auth.forbidden`. A principal of every tenant (admin without one, or `GATEWAY_AUTH=none`) may name any.
 */
export function creatingTenant(principal: Principal, requested: string | undefined): string {
  if (principal.tenant === null) return requested ?? DEFAULT_TENANT;
  if (requested !== undefined && requested !== principal.tenant) {
    throw new AuthForbiddenError(`the token acts for tenant ${principal.tenant}, not ${requested}`);
  }
  return principal.tenant;
}
