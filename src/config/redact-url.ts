/** What a redacted password is replaced with. */
export const REDACTED_PASSWORD = '***';

/**
 * Returns `url` with its password replaced by `***`, so connection strings can be logged or shown in
 * error messages. A URL without a password is returned unchanged (not re-serialised), and so is a
 * string that does not parse as a URL — callers that might echo such a string must not show it at all.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.password === '') return url;
  parsed.password = REDACTED_PASSWORD;
  return parsed.href;
}
