import { InputInvalidError, SessionExistsError } from '../../core/errors/index.js';
import type { CreateSessionParams } from '../../core/ports/session-store.js';
import type { SessionRecord } from '../../core/session-types.js';
import { DEFAULT_SESSION_AGENT, optionalAgentName } from '../../fleet/agent-name.js';
import { assertNewSessionId } from '../../fleet/session-id.js';
import { optionalQueueName } from '../../fleet/queue-name.js';
import { DEFAULT_TENANT, optionalTenant } from '../../fleet/tenant-name.js';
import { isPlainObject } from '../postgres/arguments.js';
import type { Queryable } from '../postgres/queryable.js';
import { toJsonText } from '../../core/json-text.js';
import { agentNotFound } from '../agents/agent-refusals.js';
import { decodeSession } from '../rows/session-row.js';
import { CREATE_SESSION_SQL } from './create-session-sql.js';

/**
 * Creates a session with an explicit profile. Unlike `acceptInput`, which creates sessions on the
 * fly, an existing id is an error (`session.exists`): the caller asked for these settings, and
 * silently keeping other ones would hide that they were not applied. An agent no live worker
 * registered is `agent.not_found`; either way nothing is written.
 */
export async function createSession(db: Queryable, params: CreateSessionParams): Promise<SessionRecord> {
  if (!isPlainObject(params)) throw new InputInvalidError('session parameters must be an object');
  const id = assertNewSessionId(params.id);
  const agent = optionalAgentName(params.agent) ?? DEFAULT_SESSION_AGENT;
  const tenant = optionalTenant(params.tenant) ?? DEFAULT_TENANT;
  const systemPrompt = params.systemPrompt ?? null;
  if (systemPrompt !== null && typeof systemPrompt !== 'string') {
    throw new InputInvalidError('systemPrompt must be a string or null');
  }
  if (systemPrompt !== null) toJsonText(systemPrompt, 'systemPrompt');
  const metadata = jsonObjectText(params.metadata, 'metadata');
  const config = jsonObjectText(params.config, 'config');

  const queue = optionalQueueName(params.queue) ?? '';
  const result = await db.query(CREATE_SESSION_SQL, [id, agent, systemPrompt, metadata, config, tenant, queue]);
  const row = result.rows[0] as { agentServed?: unknown; id?: unknown } | undefined;
  if (row?.agentServed !== true) throw agentNotFound(id, agent);
  if (row.id === null) throw new SessionExistsError(`session ${id} already exists`, { details: { sessionId: id } });
  return decodeSession(row);
}

function jsonObjectText(value: unknown, what: string): string {
  if (value === undefined) return '{}';
  if (!isPlainObject(value)) throw new InputInvalidError(`${what} must be a plain JSON object`);
  return toJsonText(value, what);
}
