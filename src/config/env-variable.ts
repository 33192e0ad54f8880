import type { RedisNodeAddress } from '../fleet/redis-connection.js';
import { z } from 'zod';

/** What a parser makes of one raw value: the typed value, or what is wrong with it. */
export type ParseOutcome<T> = { ok: true; value: T } | { ok: false; message: string };

/** Turns the trimmed, non-empty text of one variable into its value. */
export type ValueParser<T> = (raw: string) => ParseOutcome<T>;

const accept = <T>(value: T): ParseOutcome<T> => ({ ok: true, value });
const reject = (message: string): ParseOutcome<never> => ({ ok: false, message });
const quoted = (raw: string): string => JSON.stringify(raw);

/**
 * The schema of one environment variable. Values are trimmed and an empty value counts as unset,
 * because `FOO=` in a compose or .env file usually means "not configured", not "the empty string".
 * Unset yields `fallback`; otherwise `parse` decides, and its message becomes the zod issue.
 */
export function envVariable<T>(fallback: T, parse: ValueParser<T>) {
  return z
    .string()
    .optional()
    .transform((value, ctx): T => {
      const raw = value?.trim() ?? '';
      if (raw === '') return fallback;
      const outcome = parse(raw);
      if (outcome.ok) return outcome.value;
      ctx.addIssue({ code: 'custom', message: outcome.message });
      return z.NEVER;
    });
}

/** Any non-empty text. Its value is never echoed, so it is also the parser for secrets. */
export const text: ValueParser<string> = accept;

/** One of a fixed set of words, compared case-insensitively. */
export function oneOf<const T extends string>(allowed: readonly T[]): ValueParser<T> {
  return (raw) => {
    const match = allowed.find((word) => word === raw.toLowerCase());
    return match === undefined ? reject(`must be one of ${allowed.join(', ')} (got ${quoted(raw)})`) : accept(match);
  };
}

/** `true`/`false` or `1`/`0`, case-insensitive. */
export const flag: ValueParser<boolean> = (raw) => {
  const word = raw.toLowerCase();
  if (word === 'true' || word === '1') return accept(true);
  if (word === 'false' || word === '0') return accept(false);
  return reject(`must be true, false, 1 or 0 (got ${quoted(raw)})`);
};

/** Bounds of an integer variable and how to describe a valid value in an error message. */
export interface IntegerRule {
  min: number;
  max: number;
  /** Completes "must be …", e.g. `a positive integer`. */
  expected: string;
}

/**
 * A whole decimal number within bounds. Plain digits only: `Number()` or `z.coerce` would accept
 * `1e3`, `0x10` or `1.0`, which are almost always typos in an environment file.
 */
export function integer(rule: IntegerRule): ValueParser<number> {
  return (raw) => {
    const value = /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < rule.min) return reject(`must be ${rule.expected} (got ${quoted(raw)})`);
    if (value > rule.max) return reject(`must be at most ${rule.max} (got ${quoted(raw)})`);
    return accept(value);
  };
}

/** `0`, which switches the setting off, or what `parser` accepts. */
export function zeroOr(parser: ValueParser<number>): ValueParser<number> {
  return (raw) => (raw === '0' ? accept(0) : parser(raw));
}

/**
 * The path a Redis URL may have: none, or the database number ioredis selects. Anything else made
 * ioredis send `SELECT NaN` and fail after an accepted input was already committed.
 */
export const REDIS_DATABASE_PATH = { pattern: /^(\/\d{0,9})?$/, expected: 'nothing or a database number (/0, /1, …)' } as const;

/**
 * What an invalid URL's message says instead of its value. A value that is not a valid URL of the
 * kind wanted may hold a password where no parser finds it (`lf:pw@host/db` parses as the scheme
 * `lf:` with the path `pw@host/db`), so no part of it is shown, masked or not.
 */
const NOT_SHOWN = '(the value is not shown: it may contain a password)';

/**
 * A URL with one of `protocols` (each with its trailing colon), written with `//` after the scheme:
 * without it a WHATWG parser reads no user or password (`postgres:u:pw@db` is all path), so they
 * could be neither masked when the URL is logged nor sent as what they are. Messages never show the
 * value ({@link NOT_SHOWN}); they say what is wrong with it.
 */
export function url(protocols: readonly string[], path?: { pattern: RegExp; expected: string }): ValueParser<string> {
  const wanted = protocols.map((protocol) => `${protocol}//`).join(' or ');
  return (raw) => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      return reject(`must be a valid ${wanted} URL: it does not parse ${NOT_SHOWN}`);
    }
    if (!protocols.includes(parsed.protocol)) return reject(`must be a ${wanted} URL: its scheme is not one of these ${NOT_SHOWN}`);
    if (!raw.toLowerCase().startsWith(`${parsed.protocol}//`)) return reject(`must be a ${wanted} URL: "//" must follow the scheme ${NOT_SHOWN}`);
    if (path !== undefined && !path.pattern.test(parsed.pathname)) return reject(`must have ${path.expected} as its path ${NOT_SHOWN}`);
    return accept(raw);
  };
}

/** A name matching `pattern`; `expected` completes "must be …". */
export function matching(pattern: RegExp, expected: string): ValueParser<string> {
  return (raw) => (pattern.test(raw) ? accept(raw) : reject(`must be ${expected} (got ${quoted(raw)})`));
}


/**
 * A comma-separated list of `host:port` (an IPv6 host in brackets, `[::1]:7000`): the nodes a Redis
 * Cluster client starts from. At most 64, each port 1–65535.
 */
export const redisNodes: ValueParser<RedisNodeAddress[]> = (raw) => {
  const nodes: RedisNodeAddress[] = [];
  const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.length > 64) return reject(`must list at most 64 nodes (got ${entries.length})`);
  for (const entry of entries) {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(entry);
    const port = match === null ? 0 : Number(match[2]);
    if (match === null || port < 1 || port > 65_535) return reject(`must be host:port entries separated by commas (got ${quoted(entry)})`);
    nodes.push({ host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port });
  }
  return nodes.length === 0 ? reject('must list at least one host:port') : accept(nodes);
};
