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
  return decodedLoosely(name.replaceAll('+', ' ')).toLowerCase();
}

/**
 * `%xx` decoded. A malformed escape elsewhere in the text does not stop it: what can be decoded is,
 * as URLSearchParams does, so a mangled name cannot hide a password parameter.
 */
function decodedLoosely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
}

/**
 * The secrets `url` holds, as they may appear in text: its password as written in the URL and
 * percent-decoded (what a driver sends, and a server may quote), the value of each password query
 * parameter the same two ways, and the URL itself when it holds any. A string that does not parse is
 * all secret. Empty for null and for a URL without a password.
 */
export function urlSecrets(url: string | null): string[] {
  if (url === null || url === '') return [];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [url];
  }
  const found: string[] = [];
  if (parsed.password !== '') found.push(parsed.password, decodedLoosely(parsed.password));
  for (const part of parsed.search.slice(1).split('&')) {
    const equals = part.indexOf('=');
    if (equals === -1 || equals === part.length - 1 || !PASSWORD_PARAMETERS.has(decodeName(part.slice(0, equals)))) continue;
    const value = part.slice(equals + 1);
    // A query reads `+` as a space (URLSearchParams, which the drivers use); as written, it is a `+`.
    found.push(value, decodedLoosely(value), decodedLoosely(value.replaceAll('+', ' ')));
  }
  return found.length === 0 ? [] : [url, ...new Set(found)];
}


/** `host:port` of a connection URL: never its user or password (log lines, error messages). */
export function serverAddress(url: string, defaultPort: number): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname === '' ? 'localhost' : parsed.hostname}:${parsed.port === '' ? defaultPort : parsed.port}`;
  } catch {
    return `(unparsable URL):${defaultPort}`;
  }
}
