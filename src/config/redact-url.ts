/** What a redacted password is replaced with. */
export const REDACTED_PASSWORD = '***';

/**
 * Query parameters that carry a password: Postgres (`pg` and libpq) and ioredis take `password`
 * from the query string as well as from `user:pass@`, libpq `sslpassword`; the others are common
 * spellings. Compared after percent-decoding and lower-casing the name.
 */
const PASSWORD_PARAMETERS: ReadonlySet<string> = new Set(['password', 'pass', 'passwd', 'pwd', 'sslpassword']);

/**
 * Returns `url` with its password replaced by `***` — the one in `user:pass@` and the value of every
 * password query parameter (`?password=`, `sslpassword`, `pass`, in any case or percent-encoding) —
 * so connection strings can be logged or shown in error messages. A URL without a password is
 * returned unchanged (not re-serialised), and so is a string that does not parse as a URL — callers
 * that might echo such a string must not show it at all.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const search = redactQuery(parsed.search);
  if (parsed.password === '' && search === parsed.search) return url;
  if (parsed.password !== '') parsed.password = REDACTED_PASSWORD;
  parsed.search = search;
  return parsed.href;
}

/** The query (`?a=1&b=2`, or '') with the value of every password parameter masked; the rest kept as written. */
function redactQuery(search: string): string {
  if (search.length <= 1) return search;
  const parts = search.slice(1).split('&').map((part) => {
    const equals = part.indexOf('=');
    const name = equals === -1 ? part : part.slice(0, equals);
    return PASSWORD_PARAMETERS.has(decodeName(name)) ? `${name}=${REDACTED_PASSWORD}` : part;
  });
  return `?${parts.join('&')}`;
}

/** A query parameter's name as a server reads it: `+` is a space, `%xx` decoded, compared lower-case. */
function decodeName(name: string): string {
  const spaced = name.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced).toLowerCase();
  } catch {
    // A malformed escape: decode what can be decoded, so a mangled name cannot hide a password.
    return spaced.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))).toLowerCase();
  }
}
