import { and, asc, eq } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { UsageRoundRecord } from '../../core/session-types.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertSeq } from '../postgres/arguments.js';
import { decodeUsageRound } from '../rows/usage-round-row.js';
import { usageRounds } from '../schema/index.js';

/** Per-round usage of a session (or of one of its inputs), by input then round, each validated. */
export async function getUsageRounds(db: NodePgDatabase, sessionId: string, inputSeq?: number): Promise<UsageRoundRecord[]> {
  const id = assertSessionId(sessionId);
  const where =
    inputSeq === undefined
      ? eq(usageRounds.sessionId, id)
      : and(eq(usageRounds.sessionId, id), eq(usageRounds.inputSeq, assertSeq(inputSeq, 'inputSeq')));
  const rows = await db.select().from(usageRounds).where(where).orderBy(asc(usageRounds.inputSeq), asc(usageRounds.round));
  return rows.map((row) => decodeUsageRound(row));
}
