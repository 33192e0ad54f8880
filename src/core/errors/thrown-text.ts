/**
 * What was thrown, as text, or null when it cannot be told: never throws itself. An object without a
 * prototype cannot be converted to a string, a revoked proxy fails even `instanceof`, and an Error's
 * `message` may be a getter that throws or a value that is not a string. For values thrown by code
 * loopfleet does not own (a tool, a tools module).
 */
export function thrownText(value: unknown): string | null {
  try {
    const text: unknown = value instanceof Error ? value.message || value.name : String(value);
    return typeof text === 'string' && text !== '' ? text : null;
  } catch {
    return null;
  }
}
