/**
 * The first statement of every step: the fence, the message-seq allocation and the pending state in
 * one UPDATE. It matches only while the caller's token is current, and its row lock is held to the
 * end of the step, so a takeover either happens before (and this matches nothing) or after commit.
 * Returns the last seq used before this step; the step's messages take the next `$3` seqs.
 * Params: $1 session id, $2 lease token, $3 message count, $4 whether to set pending, $5 pending (jsonb
 * text, or null to clear).
 */
export const FENCE_STEP_SQL = `
UPDATE sessions
   SET next_message_seq = next_message_seq + $3::bigint,
       pending = CASE WHEN $4::boolean THEN $5::jsonb ELSE pending END,
       updated_at = now()
 WHERE id = $1 AND lease_token = $2
RETURNING next_message_seq - $3::bigint AS "baseSeq"`;
