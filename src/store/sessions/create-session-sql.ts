import { agentServedSql } from '../agents/agent-served-sql.js';
import { SESSION_COLUMNS } from '../rows/session-row.js';

/**
 * Creates a session unless its id is taken or no live worker serves its agent, in one statement:
 * nothing is written when refused. Always one row: `agentServed`, and the created session's columns
 * (null when nothing was created).
 *
 * Params: $1 id, $2 agent, $3 system prompt (or null), $4 metadata and $5 config as JSON text, $6 tenant,
 * $7 queue (`''`: recorded by the session's first add).
 */
export const CREATE_SESSION_SQL = `
WITH served AS (SELECT ${agentServedSql('$2::text')} AS ok),
created AS (
  INSERT INTO sessions (id, agent, system_prompt, metadata, config, tenant, queue)
  SELECT $1, $2, $3, $4::jsonb, $5::jsonb, $6, $7 FROM served WHERE served.ok
  ON CONFLICT (id) DO NOTHING
  RETURNING ${SESSION_COLUMNS}
)
SELECT served.ok AS "agentServed", created.* FROM served LEFT JOIN created ON true`;
