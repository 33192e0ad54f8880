import { InputInvalidError } from '../../core/errors/index.js';
import type { ListSessionsOptions } from '../../core/ports/session-store.js';
import { SESSION_STATUSES, type SessionStatus } from '../../core/session-types.js';
import { assertAgentName } from '../../fleet/agent-name.js';
import { isValidSessionId } from '../../fleet/session-id.js';
import { assertTenant } from '../../fleet/tenant-name.js';
import { isPlainObject } from '../postgres/arguments.js';

/** Sessions per page when none is asked for, and the most a page holds. */
export const DEFAULT_SESSION_PAGE = 50;
export const MAX_SESSION_PAGE = 200;

/** Where a page starts: strictly after (older than) this session in `created_at DESC, id DESC` order. */
export interface SessionCursor {
  /** The session's `created_at` as UTC text with microseconds, `2026-11-28T15:07:10.123456Z`. */
  createdAt: string;
  id: string;
}

/** {@link ListSessionsOptions} checked, with the defaults applied (null: no such filter). */
export interface ResolvedSessionList {
  tenant: string | null;
  agent: string | null;
  status: SessionStatus | null;
  idPrefix: string | null;
  limit: number;
  after: SessionCursor | null;
}

const KEYS = new Set(['tenant', 'agent', 'status', 'idPrefix', 'limit', 'cursor']);
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const ID_PREFIX = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Checks the options of `listSessions` before any database work; `input.invalid` naming the field. */
export function resolveSessionList(options: ListSessionsOptions | undefined): ResolvedSessionList {
  const given: unknown = options ?? {};
  if (!isPlainObject(given)) throw new InputInvalidError('session list options must be an object');
  const unknown = Object.keys(given).filter((key) => !KEYS.has(key));
  if (unknown.length > 0) throw new InputInvalidError(`session list options have unknown field(s) ${unknown.join(', ')}`, { details: { fields: unknown.slice(0, 10) } });
  const o = given as Record<string, unknown>;
  return {
    tenant: o.tenant === undefined ? null : assertTenant(o.tenant),
    agent: o.agent === undefined ? null : assertAgentName(o.agent),
    status: o.status === undefined ? null : checkStatus(o.status),
    idPrefix: o.idPrefix === undefined ? null : checkPrefix(o.idPrefix),
    limit: o.limit === undefined ? DEFAULT_SESSION_PAGE : checkLimit(o.limit),
    after: o.cursor === undefined ? null : decodeSessionCursor(o.cursor),
  };
}

/** The opaque cursor of a page that ends at this session: base64url of `[createdAt, id]` as JSON. */
export function encodeSessionCursor(cursor: SessionCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id]), 'utf8').toString('base64url');
}

/** Reads a cursor {@link encodeSessionCursor} made; anything else is `input.invalid`. */
export function decodeSessionCursor(value: unknown): SessionCursor {
  const cursor = typeof value === 'string' && value.length > 0 && value.length <= 400 ? readCursor(value) : null;
  if (cursor !== null) return cursor;
  throw new InputInvalidError('cursor is not one a session list returned (pass nextCursor as it is)', {
    details: { received: typeof value === 'string' ? value.slice(0, 80) : typeof value },
  });
}

function readCursor(value: string): SessionCursor | null {
  const parsed = parseJson(Buffer.from(value, 'base64url').toString('utf8'));
  if (!Array.isArray(parsed) || parsed.length !== 2) return null;
  const [createdAt, id] = parsed as unknown[];
  if (typeof createdAt !== 'string' || !CURSOR_TIME.test(createdAt) || Number.isNaN(Date.parse(createdAt)) || !isValidSessionId(id)) return null;
  const cursor = { createdAt, id };
  // Base64url decoding skips what it cannot read: only a cursor that encodes back to itself is one.
  return encodeSessionCursor(cursor) === value ? cursor : null;
}

/** A date as cursor text: the microseconds of a JavaScript date are always 000. */
export function cursorTime(date: Date): string {
  return date.toISOString().replace('Z', '000Z');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function checkStatus(value: unknown): SessionStatus {
  if ((SESSION_STATUSES as readonly unknown[]).includes(value)) return value as SessionStatus;
  throw new InputInvalidError(`status must be one of ${SESSION_STATUSES.join(', ')}`, { details: { received: String(value).slice(0, 64) } });
}

function checkPrefix(value: unknown): string {
  if (typeof value === 'string' && ID_PREFIX.test(value)) return value;
  throw new InputInvalidError('idPrefix must be 1 to 128 characters of letters, digits, "_", ".", ":" or "-"', {
    details: { received: typeof value === 'string' ? value.slice(0, 80) : typeof value },
  });
}

function checkLimit(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_SESSION_PAGE) return value;
  throw new InputInvalidError(`limit must be an integer from 1 to ${MAX_SESSION_PAGE}`, { details: { received: String(value).slice(0, 64) } });
}
