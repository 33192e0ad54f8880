import { InputInvalidError } from '../core/errors/index.js';

/** Agent names, as sessions and the agent registry store them: 1–64 characters of `[A-Za-z0-9_.-]`. */
export const AGENT_NAME_RULE = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The agent of a session that named none: the fleet's default agent. Always accepted, registered or
 * not (a worker serves its first agent under this name when none is called so).
 */
export const DEFAULT_SESSION_AGENT = 'default';

/** Returns the name unchanged, or throws `input.invalid` (`what` names the field in the message). */
export function assertAgentName(value: unknown, what = 'agent'): string {
  if (typeof value === 'string' && AGENT_NAME_RULE.test(value)) return value;
  throw new InputInvalidError(`${what} must be 1 to 64 characters of letters, digits, "_", "." or "-"`, {
    details: { received: typeof value === 'string' ? value.slice(0, 80) : typeof value },
  });
}

/** `undefined` when absent, else {@link assertAgentName}: an add or a create that may name an agent. */
export function optionalAgentName(value: unknown, what = 'agent'): string | undefined {
  return value === undefined ? undefined : assertAgentName(value, what);
}
