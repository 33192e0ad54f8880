import { waitingReadySql } from '../inbox/waiting-ready-sql.js';

/**
 * Sessions the sweeper must wake:
 * - open (pending or running) inputs older than the grace period and no live lease — a lost kick, a
 *   failed drain job, or (a `running` input with a lapsed lease) a worker that died mid-run — unless
 *   a `waiting` input before it is not ready (it holds the session; no drain could start the input);
 * - a `waiting` input that is ready (every child result in, or a cancel asked for: `waitingReadySql`)
 *   with no live lease, parked or last touched longer than the grace period ago: the kick the last
 *   delivery (or the cancel) brought was lost;
 * - a lease that lapsed more than the grace period ago without being released, whatever the inbox
 *   holds: its holder died (a drain always releases on its way out), possibly between an input's
 *   terminal commit and its `input_finished` event — the last input of a session included, which no
 *   later input would ever bring a drain for. The drain the kick starts publishes what is missing
 *   (I6) and releases the lease, so the session is found once;
 * - a released lease with a finish still owed, untouched for the grace period: a drain whose
 *   `input_finished` Redis refused released the lease with the flag set, and failed every attempt of
 *   its job — with no input left open, nothing else would bring the drain that publishes it (I6).
 * All parts read through indexes: the open inputs' partial index (waiting inputs are open; their
 * readiness is one lookup per awaited call in `session_inputs_input_id_uq`), `sessions_lease_expires_idx`
 * (released leases are NULL there and never read), and `sessions_finishes_owed_idx` (only released
 * sessions with the flag set). The limit takes a random sample of them: taking the same ones every
 * time (sessions whose drain fails on each attempt, or is already waiting) would starve the rest
 * whenever more than the limit are stranded.
 *
 * A tenant with a cap on inputs running at once (docs/tenant-limits.md) gets at most as many kicks as
 * it has free slots (its cap less its sessions holding a live lease): its other sessions come back
 * with `parkFor` set to the tenant, for the sweeper to park rather than kick — kicked, each would only
 * find the tenant at its cap. A tenant without a cap is read through one primary-key probe per
 * session found; the count runs only for capped tenants (`sessions_tenant_leased_idx`).
 * Only sessions of the sweeper's queue, and those from before queues were recorded (`''`): a sweeper
 * must never run another queue's sessions on its own (docs/fleet.md).
 * Returns each session's id, its tenant (its kick's line) and `parkFor`. Params: $1 grace in milliseconds,
 * $2 limit, $3 queue (null: every queue's).
 */
export const FIND_STRANDED_SESSIONS_SQL = `
WITH stranded AS (
SELECT i.session_id AS "sessionId"
  FROM session_inputs i
  JOIN sessions s ON s.id = i.session_id
 WHERE i.status IN ('pending', 'running')
   AND i.accepted_at < now() - ($1::bigint * interval '1 millisecond')
   AND (s.lease_expires_at IS NULL OR s.lease_expires_at <= now())
   AND NOT EXISTS (SELECT 1 FROM session_inputs w
                    WHERE w.session_id = i.session_id AND w.status IN ('pending', 'running', 'waiting') AND w.seq < i.seq
                      AND w.status = 'waiting' AND NOT ${waitingReadySql('w', 'w.session_id')})
UNION
SELECT w.session_id AS "sessionId"
  FROM session_inputs w
  JOIN sessions s ON s.id = w.session_id
 WHERE w.status IN ('pending', 'running', 'waiting') AND w.status = 'waiting'
   AND greatest(w.started_at, s.updated_at) < now() - ($1::bigint * interval '1 millisecond')
   AND (s.lease_expires_at IS NULL OR s.lease_expires_at <= now())
   AND ${waitingReadySql('w', 'w.session_id')}
UNION
SELECT s.id AS "sessionId"
  FROM sessions s
 WHERE s.lease_expires_at <= now() - ($1::bigint * interval '1 millisecond')
UNION
SELECT s.id AS "sessionId"
  FROM sessions s
 WHERE s.finishes_owed AND s.lease_expires_at IS NULL
   AND s.updated_at < now() - ($1::bigint * interval '1 millisecond')
),
candidates AS (
  SELECT st."sessionId", s.tenant, ts.max_concurrent_inputs AS cap
    FROM stranded AS st
    JOIN sessions AS s ON s.id = st."sessionId"
                         AND ($3::text IS NULL OR s.queue IN ($3, ''))
    LEFT JOIN tenant_settings AS ts ON ts.tenant = s.tenant AND ts.max_concurrent_inputs IS NOT NULL
),
capped AS (
  SELECT c.*, row_number() OVER (PARTITION BY c.tenant ORDER BY random()) AS rank
    FROM candidates AS c
   WHERE c.cap IS NOT NULL
),
free AS (
  SELECT t.tenant,
         t.cap - (SELECT count(*) FROM sessions AS l
                   WHERE l.tenant = t.tenant AND l.lease_expires_at IS NOT NULL AND l.lease_expires_at > now()) AS slots
    FROM (SELECT DISTINCT tenant, cap FROM capped) AS t
)
SELECT * FROM (
SELECT "sessionId", tenant, NULL::text AS "parkFor" FROM candidates WHERE cap IS NULL
UNION ALL
SELECT c."sessionId", c.tenant, CASE WHEN c.rank > f.slots THEN c.tenant END AS "parkFor"
  FROM capped AS c
  JOIN free AS f ON f.tenant = c.tenant
) AS found
 ORDER BY random()
 LIMIT $2`;
