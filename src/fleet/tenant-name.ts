import { InputInvalidError } from '../core/errors/index.js';

/** Tenant names, as sessions store them: like a session id, 1–128 characters of `[A-Za-z0-9_.:-]`. */
export const TENANT_RULE = /^[A-Za-z0-9_.:-]{1,128}$/;

/** The tenant of a session created without one. */
export const DEFAULT_TENANT = 'default';

/** Returns the name unchanged, or throws `input.invalid` (`what` names the field in the message). */
export function assertTenant(value: unknown, what = 'tenant'): string {
  if (typeof value === 'string' && TENANT_RULE.test(value)) return value;
  throw new InputInvalidError(`${what} must be 1 to 128 characters of letters, digits, "_", ".", ":" or "-"`, {
    details: { received: typeof value === 'string' ? value.slice(0, 80) : typeof value },
  });
}

/** `undefined` when absent, else {@link assertTenant}: an add or a create that may name a tenant. */
export function optionalTenant(value: unknown, what = 'tenant'): string | undefined {
  return value === undefined ? undefined : assertTenant(value, what);
}
