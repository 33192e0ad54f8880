/**
 * When a `waiting` input (parked by `parkInput`) may run again: a cancel was asked for on its
 * session, or every call it waits for has its child result in the session's inbox — the row whose
 * input id is `child:<toolCallId>` (`deliverChildResult`). Until then it holds its place in seq
 * order, and the inputs behind it wait too.
 *
 * `input` is the alias of the waiting row (its `awaiting` column, a JSON array of call ids) and
 * `sessionId` an expression naming its session. The deliveries are found through the unique index
 * `session_inputs_input_id_uq`, one lookup per awaited call; the session through its primary key.
 */
export function waitingReadySql(input: string, sessionId: string): string {
  // A scalar subquery, not EXISTS: the planner turns an EXISTS into a hashed scan of every session
  // with a cancel flag; this is one primary-key lookup.
  return `((SELECT ready_s.cancel_requested_at FROM sessions AS ready_s WHERE ready_s.id = ${sessionId}) IS NOT NULL
        OR NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(coalesce(${input}.awaiting, '[]'::jsonb)) AS awaited(id)
                        WHERE NOT EXISTS (SELECT 1 FROM session_inputs AS delivered
                                           WHERE delivered.session_id = ${sessionId}
                                             AND delivered.input_id = 'child:' || awaited.id)))`;
}
