-- Budget reserves and settles of many calls in one transaction (docs/budgets.md, "What it costs"):
-- a process's calls that are ready at once go together, so a tenant's usage rows are locked once per
-- batch instead of once per call. The calls are of distinct sessions. Lock order, the same as in
-- every budget function (no deadlock): the batch's reservation rows by (session_id, call_key,
-- budget_id), then budget_usage rows by (budget_id, window_start), then the writes, which touch only
-- rows already locked. Each call is decided in session id order against running totals, as if the
-- calls had run one after the other, so the overshoot bound and the thresholds hold as for one call.
-- The usage rows are the hot ones (every call of a tenant locks its tenant's): the reservation rows
-- are written before they are locked, so a batch holds them only for the decisions and one UPDATE.

-- The budgets each of `p_sessions` draws from (see loopfleet_budget_applicable), for all at once.
-- plpgsql, not sql: its plan is kept for the connection instead of made again at every call. Each
-- row is reached through an index (OFFSET 0 keeps the lookups per row), however small the tables
-- look to the planner.
CREATE OR REPLACE FUNCTION loopfleet_budget_applicable_batch(p_sessions text[])
RETURNS TABLE (session_id text, budget_id bigint, period text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN QUERY
  WITH RECURSIVE req AS MATERIALIZED (
    SELECT s.id, s.tenant, s.agent, s.parent_session_id
      FROM unnest(p_sessions) AS x(id)
      CROSS JOIN LATERAL (SELECT s.id, s.tenant, s.agent, s.parent_session_id FROM sessions s WHERE s.id = x.id OFFSET 0) AS s
  ), up(id, tenant, ancestor, parent, hops) AS (
    SELECT r.id, r.tenant, r.id, r.parent_session_id, 0 FROM req r
    UNION ALL
    SELECT up.id, up.tenant, s.id, s.parent_session_id, up.hops + 1
      FROM up CROSS JOIN LATERAL (SELECT s.id, s.parent_session_id FROM sessions s WHERE s.id = up.parent OFFSET 0) AS s
     WHERE up.hops < 1000
  )
  SELECT r.id, b.id, b.period FROM req r
    CROSS JOIN LATERAL (SELECT b.id, b.period FROM budgets b WHERE b.tenant = r.tenant AND b.scope = 'tenant' OFFSET 0) AS b
  UNION ALL
  SELECT r.id, b.id, b.period FROM req r
    CROSS JOIN LATERAL (SELECT b.id, b.period FROM budgets b WHERE b.tenant = r.tenant AND b.scope = 'agent' AND b.agent = r.agent OFFSET 0) AS b
  UNION ALL
  SELECT DISTINCT up.id, b.id, b.period FROM up
    CROSS JOIN LATERAL (SELECT b.id, b.period FROM budgets b WHERE b.scope = 'session' AND b.session_id = up.ancestor AND b.tenant = up.tenant OFFSET 0) AS b;
END
$$;--> statement-breakpoint

-- Locks the usage rows of `p_ids`/`p_windows` in key order, creating missing ones for budgets that
-- exist (a given-back reservation's budget may be gone); returns the keys locked. When every row
-- exists (all but a window's first calls), one SELECT … FOR UPDATE, which locks in its ORDER BY's
-- order; otherwise one INSERT in key order whose DO UPDATE (a no-op) locks a row whether it is new
-- or not.
CREATE OR REPLACE FUNCTION loopfleet_budget_lock_usage_batch(p_ids bigint[], p_windows timestamptz[])
RETURNS TABLE (budget_id bigint, window_start timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM unnest(p_ids, p_windows) AS k(id, win)
     WHERE NOT EXISTS (SELECT 1 FROM budget_usage u WHERE u.budget_id = k.id AND u.window_start = k.win)
       AND EXISTS (SELECT 1 FROM budgets b WHERE b.id = k.id)
  ) THEN
    RETURN QUERY
    SELECT u.budget_id, u.window_start FROM budget_usage u
     WHERE (u.budget_id, u.window_start) IN (SELECT k.id, k.win FROM unnest(p_ids, p_windows) AS k(id, win))
     ORDER BY u.budget_id, u.window_start
       FOR UPDATE OF u;
    RETURN;
  END IF;
  RETURN QUERY
  INSERT INTO budget_usage AS u (budget_id, window_start)
  SELECT DISTINCT k.id, k.win FROM unnest(p_ids, p_windows) AS k(id, win)
   WHERE EXISTS (SELECT 1 FROM budgets b WHERE b.id = k.id)
   ORDER BY k.id, k.win
  ON CONFLICT ON CONSTRAINT budget_usage_budget_id_window_start_pk DO UPDATE SET updated_at = u.updated_at
  RETURNING u.budget_id, u.window_start;
END
$$;--> statement-breakpoint

-- loopfleet_budget_reserve for many calls of distinct sessions. `p_calls`: a JSON array of
-- {session_id, lease_token, call_key, tokens, pico_usd}. One row per call, its session in
-- r_session_id (r_budget_session: the session of a refusing session budget). A stale lease refuses
-- only its own call. Each call's worst case is written as reserved before the usage rows are
-- locked; what a refusal or a short reservation did not grant is taken off again after.
CREATE OR REPLACE FUNCTION loopfleet_budget_reserve_batch(p_calls jsonb)
RETURNS TABLE (
  r_session_id text, r_status text, r_reason text, r_budget_id bigint, r_scope text, r_tenant text, r_agent text,
  r_budget_session text, r_unit text, r_period text, r_window_start timestamptz, r_limit bigint, r_used bigint, r_reserved bigint
)
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := loopfleet_now();
  v_sids text[];
  v_stale text[];
  v_free text[];
  v_old_sids text[];
  v_old_calls text[];
  v_old_ids bigint[];
  v_old_wins timestamptz[];
  v_back_ids bigint[];
  v_back_wins timestamptz[];
  v_back_amounts bigint[];
  v_app_sids text[];
  v_app_ids bigint[];
  v_app_wins timestamptz[];
  v_keys_id bigint[];
  v_keys_win timestamptz[];
  v_used bigint[];
  v_reserved bigint[];
  v_row record;
  v_refused boolean := false;
  v_need bigint;
  v_left bigint;
  v_idx integer;
  v_tentative integer;
  v_whole boolean := true;
  v_pending_idx integer[] := '{}';
  v_pending_amounts bigint[] := '{}';
  v_grant_sids text[] := '{}';
  v_grant_ids bigint[] := '{}';
  v_grant_amounts bigint[] := '{}';
  v_decided text[] := '{}';
  v_fits boolean;
  v_need_ids bigint[];
  v_need_wins timestamptz[];
  v_needs bigint[];
BEGIN
  -- Stale leases, and tenants without budgets (one index probe each), are answered at once.
  SELECT coalesce(array_agg(c.session_id ORDER BY c.session_id) FILTER (WHERE c.live AND c.budgeted), '{}'),
         coalesce(array_agg(c.session_id) FILTER (WHERE NOT c.live), '{}'),
         coalesce(array_agg(c.session_id) FILTER (WHERE c.live AND NOT c.budgeted), '{}')
    INTO v_sids, v_stale, v_free
    FROM (SELECT c.session_id, coalesce(s.lease_token = c.lease_token, false) AS live,
                 EXISTS (SELECT 1 FROM budgets b WHERE b.tenant = s.tenant) AS budgeted
            FROM jsonb_to_recordset(p_calls) AS c(session_id text, lease_token bigint)
            LEFT JOIN LATERAL (SELECT s.tenant, s.lease_token FROM sessions s WHERE s.id = c.session_id OFFSET 0) AS s ON true) AS c;
  RETURN QUERY
    SELECT x.sid, x.status, NULL, NULL::bigint, NULL, NULL, NULL, NULL, NULL, NULL, NULL::timestamptz, NULL::bigint, NULL::bigint, NULL::bigint
      FROM (SELECT unnest(v_stale) AS sid, 'stale' AS status UNION ALL SELECT unnest(v_free), 'none') AS x;
  IF cardinality(v_sids) = 0 THEN
    RETURN;
  END IF;

  -- Their earlier reservations (dead or replaced holders'), locked first in the global order, then
  -- deleted; what they held is given back below, under the usage rows' locks.
  SELECT coalesce(array_agg(o.session_id), '{}'), coalesce(array_agg(o.call_key), '{}'), coalesce(array_agg(o.budget_id), '{}'), coalesce(array_agg(o.window_start), '{}')
    INTO v_old_sids, v_old_calls, v_old_ids, v_old_wins
    FROM (SELECT r.session_id, r.call_key, r.budget_id, r.window_start FROM budget_reservations r
           WHERE r.session_id = ANY (v_sids) ORDER BY r.session_id, r.call_key, r.budget_id FOR UPDATE) AS o;
  IF cardinality(v_old_ids) > 0 THEN
    WITH gone AS (
      DELETE FROM budget_reservations r
       USING unnest(v_old_sids, v_old_calls, v_old_ids) AS o(session_id, call_key, id)
       WHERE r.session_id = o.session_id AND r.call_key = o.call_key AND r.budget_id = o.id
      RETURNING r.budget_id, r.window_start, r.amount
    )
    SELECT coalesce(array_agg(g.budget_id), '{}'), coalesce(array_agg(g.window_start), '{}'), coalesce(array_agg(g.amount), '{}')
      INTO v_back_ids, v_back_wins, v_back_amounts
      FROM (SELECT g.budget_id, g.window_start, sum(g.amount)::bigint AS amount FROM gone g GROUP BY g.budget_id, g.window_start) AS g;
  END IF;

  SELECT coalesce(array_agg(a.session_id ORDER BY a.session_id, a.budget_id), '{}'), coalesce(array_agg(a.budget_id ORDER BY a.session_id, a.budget_id), '{}'),
         coalesce(array_agg(loopfleet_budget_window(a.period, v_now) ORDER BY a.session_id, a.budget_id), '{}')
    INTO v_app_sids, v_app_ids, v_app_wins
    FROM loopfleet_budget_applicable_batch(v_sids) AS a;

  -- Each call's worst case, as if every call were granted in full (the common case).
  INSERT INTO budget_reservations AS r (session_id, call_key, budget_id, window_start, amount, lease_token)
    SELECT a.sid, c.call_key, a.id, a.win, CASE b.unit WHEN 'tokens' THEN c.tokens ELSE coalesce(c.pico_usd, 0) END, c.lease_token
      FROM unnest(v_app_sids, v_app_ids, v_app_wins) AS a(sid, id, win)
      JOIN jsonb_to_recordset(p_calls) AS c(session_id text, lease_token bigint, call_key text, tokens bigint, pico_usd bigint) ON c.session_id = a.sid
      CROSS JOIN LATERAL (SELECT b.unit FROM budgets b WHERE b.id = a.id OFFSET 0) AS b
    ON CONFLICT (session_id, call_key, budget_id) DO UPDATE SET amount = r.amount + excluded.amount, lease_token = excluded.lease_token;
  GET DIAGNOSTICS v_tentative = ROW_COUNT;

  -- Then every usage row either touches, in key order.
  SELECT coalesce(array_agg(k.budget_id ORDER BY k.budget_id, k.window_start), '{}'), coalesce(array_agg(k.window_start ORDER BY k.budget_id, k.window_start), '{}')
    INTO v_keys_id, v_keys_win
    FROM loopfleet_budget_lock_usage_batch(v_old_ids || v_app_ids, v_old_wins || v_app_wins) AS k;

  -- The common case: with every call's worst case added, each budget still has room left (and every
  -- money budget a price). Then every call is granted in full whatever the order: all at once.
  WITH needs AS (
    SELECT a.id, a.win, sum(CASE b.unit WHEN 'tokens' THEN c.tokens ELSE c.pico_usd END)::bigint AS need,
           bool_and(b.unit = 'tokens' OR c.pico_usd IS NOT NULL) AS priced, min(b.limit_amount) AS limit_amount
      FROM unnest(v_app_sids, v_app_ids, v_app_wins) AS a(sid, id, win)
      JOIN jsonb_to_recordset(p_calls) AS c(session_id text, tokens bigint, pico_usd bigint) ON c.session_id = a.sid
      JOIN budgets b ON b.id = a.id
     GROUP BY a.id, a.win
  )
  SELECT count(*) = (SELECT count(DISTINCT (a.id, a.win)) FROM unnest(v_app_ids, v_app_wins) AS a(id, win))
           AND coalesce(bool_and(n.priced AND n.limit_amount - u.used - greatest(0, u.reserved - coalesce(g.amount, 0)) - n.need > 0), true),
         coalesce(array_agg(n.id), '{}'), coalesce(array_agg(n.win), '{}'), coalesce(array_agg(n.need), '{}')
    INTO v_fits, v_need_ids, v_need_wins, v_needs
    FROM needs n JOIN budget_usage u ON u.budget_id = n.id AND u.window_start = n.win
    LEFT JOIN unnest(v_back_ids, v_back_wins, v_back_amounts) AS g(id, win, amount) ON g.id = n.id AND g.win = n.win;
  IF v_fits THEN
    UPDATE budget_usage u SET reserved = greatest(0, u.reserved - coalesce(x.back, 0)) + coalesce(x.need, 0), updated_at = now()
      FROM (SELECT coalesce(n.id, g.id) AS id, coalesce(n.win, g.win) AS win, n.need, g.amount AS back
              FROM unnest(v_need_ids, v_need_wins, v_needs) AS n(id, win, need)
              FULL JOIN unnest(v_back_ids, v_back_wins, v_back_amounts) AS g(id, win, amount) ON g.id = n.id AND g.win = n.win) AS x
     WHERE u.budget_id = x.id AND u.window_start = x.win;
    RETURN QUERY
      SELECT s.sid, CASE WHEN s.sid = ANY (v_app_sids) THEN 'reserved' ELSE 'none' END,
             NULL, NULL::bigint, NULL, NULL, NULL, NULL, NULL, NULL, NULL::timestamptz, NULL::bigint, NULL::bigint, NULL::bigint
        FROM unnest(v_sids) AS s(sid);
    RETURN;
  END IF;

  SELECT coalesce(array_agg(u.used ORDER BY k.ord), '{}'), coalesce(array_agg(greatest(0, u.reserved - coalesce(g.amount, 0)) ORDER BY k.ord), '{}')
    INTO v_used, v_reserved
    FROM unnest(v_keys_id, v_keys_win) WITH ORDINALITY AS k(id, win, ord)
    JOIN budget_usage u ON u.budget_id = k.id AND u.window_start = k.win
    LEFT JOIN unnest(v_back_ids, v_back_wins, v_back_amounts) AS g(id, win, amount) ON g.id = k.id AND g.win = k.win;

  -- Each call in session id order, against the totals the calls before it left.
  FOR v_row IN
    SELECT a.sid, c.tokens, c.pico_usd, b.id, b.scope, b.tenant, b.agent, b.session_id AS budget_session,
           b.unit, b.period, b.limit_amount, a.win, k.ord::integer AS idx, a.id = max(a.id) OVER (PARTITION BY a.sid) AS last
      FROM unnest(v_app_sids, v_app_ids, v_app_wins) AS a(sid, id, win)
      JOIN jsonb_to_recordset(p_calls) AS c(session_id text, tokens bigint, pico_usd bigint) ON c.session_id = a.sid
      JOIN budgets b ON b.id = a.id
      JOIN unnest(v_keys_id, v_keys_win) WITH ORDINALITY AS k(id, win, ord) ON k.id = a.id AND k.win = a.win
     ORDER BY a.sid, a.id
  LOOP
    IF NOT v_refused THEN
      r_reason := NULL;
      IF v_row.unit = 'usd' AND v_row.pico_usd IS NULL THEN
        r_reason := 'unpriced_model';
      ELSE
        v_need := CASE v_row.unit WHEN 'tokens' THEN v_row.tokens ELSE v_row.pico_usd END;
        v_left := v_row.limit_amount - v_used[v_row.idx] - v_reserved[v_row.idx];
        -- The bound (docs/budgets.md): a reservation short of the worst case only when nothing else is reserved.
        IF v_left <= 0 OR (v_left < v_need AND v_reserved[v_row.idx] > 0) THEN
          r_reason := 'limit';
        END IF;
      END IF;
      IF r_reason IS NOT NULL THEN
        v_refused := true;
        r_session_id := v_row.sid;
        r_status := 'refused';
        r_budget_id := v_row.id;
        r_scope := v_row.scope;
        r_tenant := v_row.tenant;
        r_agent := v_row.agent;
        r_budget_session := v_row.budget_session;
        r_unit := v_row.unit;
        r_period := v_row.period;
        r_window_start := v_row.win;
        r_limit := v_row.limit_amount;
        r_used := v_used[v_row.idx];
        r_reserved := v_reserved[v_row.idx];
        RETURN NEXT;
      ELSE
        v_pending_idx := v_pending_idx || v_row.idx;
        v_pending_amounts := v_pending_amounts || least(v_need, v_left);
        v_whole := v_whole AND v_left >= v_need;
      END IF;
    END IF;
    IF v_row.last THEN
      IF v_refused THEN
        v_whole := false;
      ELSE
        FOR i IN 1 .. cardinality(v_pending_idx) LOOP
          v_idx := v_pending_idx[i];
          v_reserved[v_idx] := v_reserved[v_idx] + v_pending_amounts[i];
          v_grant_sids := v_grant_sids || v_row.sid;
          v_grant_ids := v_grant_ids || v_keys_id[v_idx];
          v_grant_amounts := v_grant_amounts || v_pending_amounts[i];
        END LOOP;
        r_session_id := v_row.sid;
        r_status := 'reserved';
        r_reason := NULL;
        r_budget_id := NULL;
        r_scope := NULL;
        r_tenant := NULL;
        r_agent := NULL;
        r_budget_session := NULL;
        r_unit := NULL;
        r_period := NULL;
        r_window_start := NULL;
        r_limit := NULL;
        r_used := NULL;
        r_reserved := NULL;
        RETURN NEXT;
      END IF;
      v_decided := v_decided || v_row.sid;
      v_refused := false;
      v_pending_idx := '{}';
      v_pending_amounts := '{}';
    END IF;
  END LOOP;

  -- Live calls no budget applies to.
  RETURN QUERY
    SELECT s.sid, 'none', NULL, NULL::bigint, NULL, NULL, NULL, NULL, NULL, NULL, NULL::timestamptz, NULL::bigint, NULL::bigint, NULL::bigint
      FROM unnest(v_sids) AS s(sid) WHERE NOT (s.sid = ANY (v_decided));

  UPDATE budget_usage u SET reserved = k.reserved, updated_at = now()
    FROM unnest(v_keys_id, v_keys_win, v_reserved) AS k(id, win, reserved)
   WHERE u.budget_id = k.id AND u.window_start = k.win AND u.reserved <> k.reserved;

  -- What was written and not granted: refused calls' rows go, short ones keep what they were granted.
  IF NOT v_whole OR v_tentative <> cardinality(v_grant_ids) THEN
    UPDATE budget_reservations r SET amount = r.amount - (t.amount - coalesce(g.amount, 0))
      FROM (SELECT a.sid, a.id, c.call_key, CASE b.unit WHEN 'tokens' THEN c.tokens ELSE coalesce(c.pico_usd, 0) END AS amount
              FROM unnest(v_app_sids, v_app_ids) AS a(sid, id)
              JOIN jsonb_to_recordset(p_calls) AS c(session_id text, call_key text, tokens bigint, pico_usd bigint) ON c.session_id = a.sid
              JOIN budgets b ON b.id = a.id) AS t
      LEFT JOIN unnest(v_grant_sids, v_grant_ids, v_grant_amounts) AS g(sid, id, amount) ON g.sid = t.sid AND g.id = t.id
     WHERE r.session_id = t.sid AND r.call_key = t.call_key AND r.budget_id = t.id AND (g.id IS NULL OR g.amount < t.amount);
    DELETE FROM budget_reservations r
     USING unnest(v_app_sids, v_app_ids) AS a(sid, id) JOIN jsonb_to_recordset(p_calls) AS c(session_id text, call_key text) ON c.session_id = a.sid
     WHERE r.session_id = a.sid AND r.call_key = c.call_key AND r.budget_id = a.id AND r.amount <= 0;
  END IF;
END
$$;--> statement-breakpoint

-- loopfleet_budget_settle for many calls of distinct sessions. `p_calls`: a JSON array of
-- {session_id, call_key, tokens, pico_usd}. One row per budget charged per call, its session in
-- r_session_id; the charges of one budget go in session id order, each with `used` before and after,
-- so exactly one settle crosses a threshold. The calls' reservation rows go before the usage rows
-- are locked.
CREATE OR REPLACE FUNCTION loopfleet_budget_settle_batch(p_calls jsonb)
RETURNS TABLE (
  r_session_id text, r_budget_id bigint, r_scope text, r_unit text, r_period text, r_window_start timestamptz,
  r_limit bigint, r_used_before bigint, r_used_after bigint
)
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz;
  v_held_sids text[];
  v_held_calls text[];
  v_held_ids bigint[];
  v_held_wins timestamptz[];
  v_held_amounts bigint[] := '{}';
  v_free text[];
  v_free_sids text[] := '{}';
  v_free_ids bigint[] := '{}';
  v_free_wins timestamptz[] := '{}';
BEGIN
  SELECT coalesce(array_agg(o.session_id), '{}'), coalesce(array_agg(o.call_key), '{}'), coalesce(array_agg(o.budget_id), '{}'), coalesce(array_agg(o.window_start), '{}')
    INTO v_held_sids, v_held_calls, v_held_ids, v_held_wins
    FROM (SELECT r.session_id, r.call_key, r.budget_id, r.window_start
            FROM budget_reservations r JOIN jsonb_to_recordset(p_calls) AS c(session_id text, call_key text)
              ON r.session_id = c.session_id AND r.call_key = c.call_key
           ORDER BY r.session_id, r.call_key, r.budget_id FOR UPDATE OF r) AS o;
  IF cardinality(v_held_ids) > 0 THEN
    WITH gone AS (
      DELETE FROM budget_reservations r
       USING unnest(v_held_sids, v_held_calls, v_held_ids) AS o(session_id, call_key, id)
       WHERE r.session_id = o.session_id AND r.call_key = o.call_key AND r.budget_id = o.id
      RETURNING r.session_id, r.budget_id, r.window_start, r.amount
    )
    SELECT coalesce(array_agg(g.session_id), '{}'), coalesce(array_agg(g.budget_id), '{}'), coalesce(array_agg(g.window_start), '{}'), coalesce(array_agg(g.amount), '{}')
      INTO v_held_sids, v_held_ids, v_held_wins, v_held_amounts
      FROM gone g;
  END IF;

  -- Calls whose reservations were given back are still charged, to the budgets that apply now.
  SELECT coalesce(array_agg(c.session_id), '{}') INTO v_free
    FROM jsonb_to_recordset(p_calls) AS c(session_id text, tokens bigint, pico_usd bigint)
   WHERE NOT (c.session_id = ANY (v_held_sids)) AND (c.tokens > 0 OR coalesce(c.pico_usd, 0) > 0);
  IF cardinality(v_free) > 0 THEN
    v_now := loopfleet_now();
    SELECT coalesce(array_agg(a.session_id), '{}'), coalesce(array_agg(a.budget_id), '{}'), coalesce(array_agg(loopfleet_budget_window(a.period, v_now)), '{}')
      INTO v_free_sids, v_free_ids, v_free_wins
      FROM loopfleet_budget_applicable_batch(v_free) AS a;
  END IF;
  IF cardinality(v_held_ids) + cardinality(v_free_ids) = 0 THEN
    RETURN;
  END IF;
  PERFORM 1 FROM loopfleet_budget_lock_usage_batch(v_held_ids || v_free_ids, v_held_wins || v_free_wins);

  RETURN QUERY
  WITH calls AS (
    SELECT * FROM jsonb_to_recordset(p_calls) AS c(session_id text, tokens bigint, pico_usd bigint)
  ), charges AS (
    SELECT h.sid, h.id, h.win, h.amount AS released, b.scope, b.unit, b.period, b.limit_amount,
           CASE b.unit WHEN 'tokens' THEN c.tokens ELSE coalesce(c.pico_usd, h.amount) END AS charge
      FROM unnest(v_held_sids, v_held_ids, v_held_wins, v_held_amounts) AS h(sid, id, win, amount)
      JOIN budgets b ON b.id = h.id JOIN calls c ON c.session_id = h.sid
    UNION ALL
    SELECT f.sid, f.id, f.win, 0, b.scope, b.unit, b.period, b.limit_amount,
           CASE b.unit WHEN 'tokens' THEN c.tokens ELSE coalesce(c.pico_usd, 0) END
      FROM unnest(v_free_sids, v_free_ids, v_free_wins) AS f(sid, id, win) JOIN budgets b ON b.id = f.id JOIN calls c ON c.session_id = f.sid
  ), totals AS (
    SELECT ch.id, ch.win, sum(ch.charge)::bigint AS charge, sum(ch.released)::bigint AS released
      FROM charges ch GROUP BY ch.id, ch.win
  ), written AS (
    UPDATE budget_usage u SET used = u.used + t.charge, reserved = greatest(0, u.reserved - t.released), updated_at = now()
      FROM totals t WHERE u.budget_id = t.id AND u.window_start = t.win
    RETURNING u.budget_id
  ), ordered AS (
    SELECT ch.*, u.used + coalesce(sum(ch.charge) OVER (PARTITION BY ch.id, ch.win ORDER BY ch.sid
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)::bigint AS used_before
      FROM charges ch JOIN budget_usage u ON u.budget_id = ch.id AND u.window_start = ch.win
  )
  SELECT o.sid, o.id, o.scope, o.unit, o.period, o.win, o.limit_amount, o.used_before, o.used_before + o.charge
    FROM ordered o;
END
$$;
