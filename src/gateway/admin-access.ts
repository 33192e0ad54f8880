import { AuthForbiddenError } from '../core/errors/index.js';
import { hasScope, type Principal } from './principal.js';

/**
 * The operator routes (budgets, usage, tenant settings) need `admin` scope; a principal of one tenant
 * acts on its own tenant only. Throws `auth.forbidden` otherwise, before any read.
 */
export function assertAdmin(principal: Principal): void {
  if (!hasScope(principal, 'admin')) throw new AuthForbiddenError(`this needs scope admin; the token has ${principal.scope}`);
}

/**
 * The tenant an operator request acts on: the token's when it has one (another named is
 * `auth.forbidden`), else what the request names (undefined: every tenant).
 */
export function adminTenant(principal: Principal, requested: string | undefined): string | undefined {
  assertAdmin(principal);
  if (principal.tenant === null) return requested;
  if (requested !== undefined && requested !== principal.tenant) throw new AuthForbiddenError(`the token acts for tenant ${principal.tenant}, not ${requested}`);
  return principal.tenant;
}
