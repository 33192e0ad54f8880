/**
 * Compaction: flips the folded messages to `compacted` (kept for audit, never sent to a model again)
 * and records the fold. Only active messages are flipped; `folded_messages` counts those, so the
 * caller can refuse a fold that named messages which were not active.
 * Params: $1 session id, $2 fold seqs (bigint[]), $3 note seq, $4 input seq, $5 from seq, $6 to seq,
 * $7 estimated tokens before, $8 after, $9 model.
 */
export const FOLD_MESSAGES_SQL = `
WITH folded AS (
  UPDATE messages SET state = 'compacted'
   WHERE session_id = $1 AND seq = ANY($2::bigint[]) AND state = 'active'
  RETURNING seq
)
INSERT INTO compactions
  (session_id, note_seq, input_seq, from_seq, to_seq, folded_messages, estimated_tokens_before,
   estimated_tokens_after, model)
SELECT $1, $3, $4, $5, $6, count(*), $7, $8, $9 FROM folded
RETURNING folded_messages AS "foldedMessages"`;
