import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { InputInvalidError, SessionExistsError } from '../../core/errors/index.js';
import type { CreateSessionParams } from '../../core/ports/session-store.js';
import type { SessionRecord } from '../../core/session-types.js';
import { assertNewSessionId } from '../../fleet/session-id.js';
import { assertText, isPlainObject } from '../postgres/arguments.js';
import { toJsonText } from '../../core/json-text.js';
import { decodeSession } from '../rows/session-row.js';
import { sessions } from '../schema/index.js';

/** Longest agent profile name. */
const MAX_AGENT_LENGTH = 128;

/**
 * Creates a session with an explicit profile. Unlike `acceptInput`, which creates sessions on the
 * fly, an existing id is an error (`session.exists`): the caller asked for these settings, and
 * silently keeping other ones would hide that they were not applied.
 */
export async function createSession(db: NodePgDatabase, params: CreateSessionParams): Promise<SessionRecord> {
  if (!isPlainObject(params)) throw new InputInvalidError('session parameters must be an object');
  const id = assertNewSessionId(params.id);
  const agent = params.agent === undefined ? undefined : assertText(params.agent, 'agent', MAX_AGENT_LENGTH);
  const systemPrompt = params.systemPrompt ?? null;
  if (systemPrompt !== null && typeof systemPrompt !== 'string') {
    throw new InputInvalidError('systemPrompt must be a string or null');
  }
  if (systemPrompt !== null) toJsonText(systemPrompt, 'systemPrompt');
  const metadata = jsonObject(params.metadata, 'metadata');
  const config = jsonObject(params.config, 'config');

  const rows = await db
    .insert(sessions)
    .values({ id, systemPrompt, metadata, config, ...(agent === undefined ? {} : { agent }) })
    .onConflictDoNothing({ target: sessions.id })
    .returning();
  const row = rows[0];
  if (row === undefined) throw new SessionExistsError(`session ${id} already exists`, { details: { sessionId: id } });
  return decodeSession(row);
}

function jsonObject(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) throw new InputInvalidError(`${what} must be a plain JSON object`);
  toJsonText(value, what);
  return value;
}
