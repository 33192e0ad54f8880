import { INPUT_COLUMNS } from '../rows/input-row.js';
import type { BatchStatement } from '../batching/row-batcher.js';
import { qualifiedColumns } from '../rows/prefixed-row.js';
import { SESSION_COLUMNS } from '../rows/session-row.js';
import { lockedSession, lockSessionsCte } from '../fencing/lock-sessions-sql.js';
import { waitingReadySql } from './waiting-ready-sql.js';

/** Prefix of the session's columns in a claim's row (the input's are unprefixed). */
export const SESSION_PREFIX = 'session.';

/**
 * Each requested session's lowest open input, as `next (session_id, seq, status)`, when it can be
 * claimed. Its predicate is exactly that of the partial index `session_inputs_open_idx`, so finished
 * inputs are never read however long the inbox grows. A `waiting` input (parked for child sessions)
 * keeps its place in seq order, so the inputs behind it wait too; it is claimable only once ready
 * (`waitingReadySql`). A session whose lowest open input is a waiting one not ready has no row here:
 * to a claim it looks exactly like an empty inbox, and the drain releases the lease. A delivery or a
 * cancel committed after the statement's snapshot is not seen; its kick brings the next drain.
 */
const NEXT_OPEN_INPUTS = `next AS (
  SELECT req.session_id, n.seq, n.status
    FROM req
   CROSS JOIN LATERAL (
     SELECT seq, status, awaiting
       FROM session_inputs
      WHERE session_id = req.session_id AND status IN ('pending', 'running', 'waiting')
      ORDER BY seq
      LIMIT 1
   ) AS n
   WHERE n.status <> 'waiting' OR ${waitingReadySql('n', 'req.session_id')}
)`;

/**
 * Marks each claimed input `running`, counting the attempt, only for a session whose row `guard`
 * (the fence) returned and meets `condition` (on that row, `g`), and only while the input is as the
 * snapshot saw it: a holder whose lease lapsed may have ended it while this statement waited for the
 * session row (its end committed first), and an ended input must never be started again (I3, I6).
 * `started_at` is the statement's clock time, not the transaction start (`now()`), which could
 * precede the `accepted_at` of an input accepted while the statement waited for the session row
 * (I2). A `waiting` input woken up starts its attempts again at 1: the park was progress, not a
 * failed attempt (a run that waits for children many times is no poison input). Its `awaiting` is
 * cleared.
 */
const claimedCte = (guard: string, condition?: string) => `claimed AS (
  UPDATE session_inputs AS i
     SET status = 'running',
         attempts = CASE WHEN next.status = 'waiting' THEN 1 ELSE i.attempts + 1 END,
         awaiting = NULL,
         started_at = coalesce(i.started_at, clock_timestamp())
    FROM next
    JOIN ${guard} AS g ON g.id = next.session_id${condition === undefined ? '' : ` AND ${condition}`}
   WHERE i.session_id = next.session_id AND i.seq = next.seq AND i.status = next.status
  RETURNING i.*, next.status AS previous_status
)`;

/**
 * Whether the session row `alias` may owe an `input_finished` (I6): its `finishes_owed` flag, and an
 * input ended at all (`stat_inputs`, bumped by the same commits that set the flag). The flag starts
 * set, for rows that predate it; a session that never ended an input owes nothing, so its first drain
 * claims with the lease like any other.
 */
const owesFinishes = (alias: string) => `(${alias}.finishes_owed AND ${alias}.stat_inputs > 0)`;

/**
 * A claim's row: the input's columns, `resumed` (it was `running`), `woken` (it was `waiting`), whether other inputs wait (and whether one of them
 * would change the run: `steer`, `interrupt`, a timer), and the session's columns, prefixed. The
 * claimed input is the lowest open one, so the others waiting are the open inputs after it — a
 * predicate of `session_inputs_open_idx` again (a `status = 'pending'` test would let the planner
 * scan every session's pending inputs through `session_inputs_pending_age_idx`).
 */
const claimedColumns = (session: string, sessionId: string) => `${qualifiedColumns(INPUT_COLUMNS, 'c')},
       c.previous_status = 'running' AS resumed,
       c.previous_status = 'waiting' AS woken,
       EXISTS (SELECT 1 FROM session_inputs AS p
                WHERE p.session_id = ${sessionId} AND p.status IN ('pending', 'running') AND p.seq > c.seq) AS "pendingInputs",
       EXISTS (SELECT 1 FROM session_inputs AS p
                WHERE p.session_id = ${sessionId} AND p.status IN ('pending', 'running') AND p.seq > c.seq
                  AND (p.mode IN ('steer', 'interrupt') OR p.kind = 'timer')) AS "pendingSteers",
       ${qualifiedColumns(SESSION_COLUMNS, session, SESSION_PREFIX)}`;

/**
 * The session row `alias` may be leased by the plain take: its tenant has no cap on inputs running at
 * once, or the request `req` comes from the capped take, which counted under the tenant's row lock.
 */
const uncappedOrCounted = (alias: string, req: string) =>
  `(coalesce(${req}.capped, false) OR NOT EXISTS (SELECT 1 FROM tenant_settings AS ts WHERE ts.tenant = ${alias}.tenant AND ts.max_concurrent_inputs IS NOT NULL))`;

/**
 * The session row `alias` runs on the queue of the request `req` (none named: any), or on none yet
 * (`''`, from before queues were recorded; the take then records the request's). A drain never takes
 * the lease of another queue's session: it would run it and publish on its own queue's streams.
 */
const onQueue = (alias: string, req: string) => `(${req}.queue IS NULL OR ${alias}.queue IN ('', ${req}.queue))`;

/** The column of a next-claim row naming the session it answers (any other row may be all null). */
export const CLAIM_FOR = 'claimFor';

/**
 * Fenced: starts (or resumes) each requested session's lowest open input under the caller's lease
 * token and returns it with the session row as the claim left it (`running`). It takes its requests
 * as rows, so the next claims of drains of different sessions share a statement
 * (`../batching/row-batcher.ts`); each is fenced on its own row.
 *
 * The session row UPDATE is the fence: it matches only while the token is current — on the row's
 * latest version, re-checked after any wait for its lock — and holds the lock until commit, so a
 * takeover cannot interleave; the input is updated only once its fence matched. The open input is
 * read in the statement's snapshot: an input accepted while the statement waited for a row lock is
 * not seen and is left for the next claim, which that input's kick brings (later, never lost).
 * When no input is open nothing is written for that session; `open` and the snapshot's `token` then
 * tell an empty inbox from a lost lease. One row per request, keyed by {@link CLAIM_FOR}.
 * Params: $1 a JSON array of `{ "session_id", "lease_token" }`.
 */
export const CLAIM_NEXT_INPUTS: BatchStatement = {
  name: 'loopfleet_claim_next_inputs',
  key: CLAIM_FOR,
  text: `
WITH req AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(session_id text, lease_token bigint)
),
${NEXT_OPEN_INPUTS},
${lockSessionsCte('req', 'locking.lease_token = req.lease_token AND EXISTS (SELECT 1 FROM next WHERE next.session_id = locking.id)')},
marked AS (
  UPDATE sessions AS s
     SET status = 'running', updated_at = now()
    FROM req
   WHERE s.id = req.session_id AND ${lockedSession('s')} AND s.lease_token = req.lease_token
     AND EXISTS (SELECT 1 FROM next WHERE next.session_id = s.id)
  RETURNING s.*
),
${claimedCte('marked')}
SELECT req.session_id AS "${CLAIM_FOR}",
       (SELECT count(*) FROM next WHERE next.session_id = req.session_id)::int AS open,
       (SELECT lease_token FROM sessions WHERE id = req.session_id) AS token,
       ${claimedColumns('m', 'req.session_id')}
  FROM req
  LEFT JOIN claimed AS c ON c.session_id = req.session_id
  LEFT JOIN marked AS m ON m.id = req.session_id`,
};

/**
 * One statement, one round trip, at the start of every drain: takes the lease when it is free or
 * lapsed — database clock, a fresh token from `lease_token_seq`, exactly as `ACQUIRE_LEASE_SQL` —
 * and, in the same write, claims the lowest open input under the new token as
 * {@link CLAIM_NEXT_INPUTS} does. The session is marked `running` only when an input is claimed.
 *
 * It claims nothing while the session may owe an `input_finished` (`finishesOwed`, as the locked row
 * says): the drain must publish it before any input starts, and a claim counts an attempt — a repair
 * failing again and again (Redis down) would otherwise use up the attempts of an input that never
 * ran, until the drain gave it up as a poison input. The drain claims with {@link CLAIM_NEXT_INPUTS},
 * under the token, once its repair succeeded.
 *
 * It takes its requests as rows, so drains of different sessions starting at the same moment share
 * the statement (`../batching/row-batcher.ts`); each session's lease is taken, or not, on its own row (its
 * `nextval` evaluated once that row is locked, so tokens still grow per session), and each claim
 * joins its own lease. A session whose lease is held returns no row (the caller then reads who holds
 * it, and for how long). Each row is the claim's columns as {@link CLAIM_NEXT_INPUTS} returns them,
 * the input's null when nothing was claimed, `finishesOwed` (see `owesFinishes`), and
 * `sawOpen`: the snapshot saw an open input — true with no input claimed when finishes are owed, or
 * when the input it saw was ended meanwhile by the holder whose lease lapsed (the caller then claims,
 * in a new snapshot, under the new token).
 * It takes no lease of a session whose tenant has a cap on inputs running at once
 * (`tenant_settings.max_concurrent_inputs`) unless the record says `capped`: the caller then holds the
 * tenant's settings row and counted its leases below the cap (`../lease/acquire-capped-lease.ts`). A
 * tenant without a cap pays one primary-key probe of `tenant_settings` inside the statement, no round
 * trip (docs/tenant-limits.md).
 * It takes no lease of a session of another queue than the record's `queue` (`onQueue`), and records
 * that queue on a session that has none yet.
 * Params: $1 a JSON array of `{ "session_id", "owner", "ttl_ms", "capped"?, "queue"? }`.
 */
export const ACQUIRE_LEASES_AND_CLAIM: BatchStatement = {
  name: 'loopfleet_acquire_leases_and_claim',
  key: `${SESSION_PREFIX}id`,
  text: `
WITH req AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(session_id text, owner text, ttl_ms bigint, capped boolean, queue text)
),
${NEXT_OPEN_INPUTS},
${lockSessionsCte('req', `(locking.lease_expires_at IS NULL OR locking.lease_expires_at <= now()) AND ${uncappedOrCounted('locking', 'req')} AND ${onQueue('locking', 'req')}`)},
leased AS (
  UPDATE sessions AS s
     SET lease_owner = req.owner,
         queue = CASE WHEN s.queue = '' THEN coalesce(req.queue, '') ELSE s.queue END,
         lease_token = nextval('lease_token_seq'),
         lease_expires_at = now() + req.ttl_ms * interval '1 millisecond',
         status = CASE WHEN NOT ${owesFinishes('s')} AND EXISTS (SELECT 1 FROM next WHERE next.session_id = s.id) THEN 'running' ELSE s.status END,
         updated_at = now()
    FROM req
   WHERE s.id = req.session_id AND ${lockedSession('s')}
     AND (s.lease_expires_at IS NULL OR s.lease_expires_at <= now())
     AND ${uncappedOrCounted('s', 'req')}
     AND ${onQueue('s', 'req')}
  RETURNING s.*
),
${claimedCte('leased', `NOT ${owesFinishes('g')}`)}
SELECT ${claimedColumns('l', 'l.id')},
       ${owesFinishes('l')} AS "finishesOwed",
       EXISTS (SELECT 1 FROM next WHERE next.session_id = l.id) AS "sawOpen"
  FROM leased AS l
  LEFT JOIN claimed AS c ON c.session_id = l.id`,
};
