/**
 * Lock order of batched statements (docs/store.md, "Group commit"). A statement that writes the
 * `sessions` rows of many sessions locks them as its plan visits them: `UPDATE sessions … FROM <rows>`
 * on a table of a few thousand sessions is planned as a hash join over a sequential scan, which
 * visits — and locks — rows in heap order, not in the order the rows were sent. Two statements
 * sharing some sessions (one process's accepts and another's steps, two drains' claims) could then
 * lock them in opposite orders and deadlock; Postgres breaks that only after `deadlock_timeout`
 * (1 s by default), so every deadlock stalled both statements — and every write queued behind them —
 * for a second.
 *
 * So each such statement first locks its sessions' rows in session id order, bytewise
 * (`COLLATE "C"`, whatever the database's collation), and its UPDATE writes only rows among those
 * locked, whose ids it reads — all of them — before it reads a row. Accepts take their rows in the same order
 * (`ORDER BY … COLLATE "C"` on their insert). Locking in one global order, no two of these
 * statements can wait for each other in a cycle.
 *
 * `FOR NO KEY UPDATE` is the lock an UPDATE of non-key columns takes anyway: it conflicts with another
 * writer of the row (and an accept's `ON CONFLICT DO UPDATE`), not with the key-share locks of foreign
 * key checks (inputs and messages inserted for the session). A row that changed since the statement's
 * snapshot is locked on its latest version, as the UPDATE would, and the UPDATE re-checks its
 * conditions there as before.
 */

/** The name of the CTE {@link lockSessionsCte} defines. */
export const SESSION_LOCKS = 'session_locks';

/**
 * A CTE locking, in session id order, the `sessions` rows (`locking`) named by `source.session_id`
 * that meet `condition` — the statement's own condition on the row (`locking`) and its record
 * (`source`), so it locks the rows its UPDATE would and no others: a row the UPDATE would pass over
 * on the snapshot (an empty inbox, a stale token) is not waited for, as before. A row a concurrent
 * writer changed is locked on its latest version and the condition checked again there. The ids
 * are also given as an array, so the planner can reach the rows through the primary key (a batch's
 * record set is estimated at 100 rows, which alone makes it scan the whole table); it does once the
 * table is past a few pages.
 */
export function lockSessionsCte(source: string, condition: string): string {
  return `${SESSION_LOCKS} AS MATERIALIZED (
  SELECT locking.id
    FROM sessions AS locking
    JOIN ${source} ON ${source}.session_id = locking.id
   WHERE locking.id = ANY(ARRAY(SELECT ${source}.session_id FROM ${source}))
     AND ${condition}
   ORDER BY locking.id COLLATE "C"
     FOR NO KEY UPDATE OF locking
)`;
}

/**
 * The UPDATE's condition on its row (`alias`): one of the locked rows. The array is computed once,
 * before the UPDATE reads a row — so every lock is taken, in order, before it writes — and gives it
 * a primary-key path to its rows.
 */
export function lockedSession(alias: string): string {
  return `${alias}.id = ANY(ARRAY(SELECT ${SESSION_LOCKS}.id FROM ${SESSION_LOCKS}))`;
}
