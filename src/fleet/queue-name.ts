import { InputInvalidError } from '../core/errors/index.js';

/** Queue names, as `LOOPFLEET_QUEUE` takes them: BullMQ refuses ":", and the name is in every Redis key. */
export const QUEUE_RULE = /^[A-Za-z0-9_-]{1,64}$/;

/** `null` when absent, else the name unchanged; anything else is `input.invalid`. */
export function optionalQueueName(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' && QUEUE_RULE.test(value)) return value;
  throw new InputInvalidError('queue must be 1 to 64 characters of A-Z, a-z, 0-9, "_" or "-"', {
    details: { received: typeof value === 'string' ? value.slice(0, 80) : typeof value },
  });
}
