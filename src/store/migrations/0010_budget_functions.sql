-- Budget enforcement (docs/budgets.md): reserve before an LLM call, settle after it, give back what
-- dead or replaced holders left. Each is one function, so one round trip and one transaction.
-- Lock order, the same in every function (no deadlock): this session's reservation rows first
-- (the sweeper skips locked ones), then budget_usage rows in (budget_id, window_start) order, then
-- the writes, which touch only rows already locked.

-- The start of the window a budget counts in at `p_at`: the UTC day or month, or the epoch for `total`.
CREATE OR REPLACE FUNCTION loopfleet_budget_window(p_period text, p_at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_period
    WHEN 'day' THEN date_trunc('day', p_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
    WHEN 'month' THEN date_trunc('month', p_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
    ELSE 'epoch'::timestamptz
  END
$$;--> statement-breakpoint

-- The budgets a call of a session draws from, in id order: its tenant's, its tenant's for its agent,
-- and the session budgets of the session and of every ancestor (children draw from their parents').
CREATE OR REPLACE FUNCTION loopfleet_budget_applicable(p_tenant text, p_agent text, p_session_id text, p_parent text)
RETURNS SETOF budgets
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_chain text[] := ARRAY[p_session_id];
BEGIN
  -- The walk up the tree only when the tenant has session budgets at all.
  IF p_parent IS NOT NULL AND EXISTS (SELECT 1 FROM budgets b WHERE b.tenant = p_tenant AND b.scope = 'session') THEN
    WITH RECURSIVE up(id, parent, hops) AS (
      SELECT s.id, s.parent_session_id, 1 FROM sessions s WHERE s.id = p_parent
      UNION ALL
      SELECT s.id, s.parent_session_id, up.hops + 1 FROM sessions s JOIN up ON s.id = up.parent WHERE up.hops < 1000
    )
    SELECT v_chain || coalesce(array_agg(up.id), '{}') INTO v_chain FROM up;
  END IF;
  RETURN QUERY
    SELECT b.* FROM budgets b
     WHERE b.tenant = p_tenant
       AND (b.scope = 'tenant' OR (b.scope = 'agent' AND b.agent = p_agent) OR (b.scope = 'session' AND b.session_id = ANY (v_chain)))
     ORDER BY b.id;
END
$$;--> statement-breakpoint

-- Takes the lock of each usage row of `p_ids`/`p_windows` in key order, creating the missing ones
-- (`p_create`: only for budgets that exist; a given-back reservation's budget may be gone).
CREATE OR REPLACE FUNCTION loopfleet_budget_lock_usage(p_ids bigint[], p_windows timestamptz[], p_create boolean[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_key record;
BEGIN
  FOR v_key IN
    SELECT k.id, k.win, bool_or(k.create_row) AS create_row
      FROM unnest(p_ids, p_windows, p_create) AS k(id, win, create_row)
     GROUP BY k.id, k.win
     ORDER BY k.id, k.win
  LOOP
    IF v_key.create_row THEN
      -- DO UPDATE (a no-op) locks the row whether it is new or not.
      INSERT INTO budget_usage AS u (budget_id, window_start) VALUES (v_key.id, v_key.win)
        ON CONFLICT (budget_id, window_start) DO UPDATE SET updated_at = u.updated_at;
    ELSE
      PERFORM 1 FROM budget_usage u WHERE u.budget_id = v_key.id AND u.window_start = v_key.win FOR UPDATE;
    END IF;
  END LOOP;
END
$$;--> statement-breakpoint

-- Reserves one call's worst case on every budget that applies, or on none. `p_tokens`: prompt
-- estimate + max output tokens; `p_picousd`: the same in picodollars, NULL when the model has no
-- price. Gives back this session's earlier reservations first (one call runs per session at a time,
-- so any earlier one is a dead or replaced holder's, or this call's from an attempt that failed).
-- r_status: `stale` (the lease token is not the session's: nothing done), `none` (no budget applies),
-- `reserved`, or `refused` with the budget that refused and why (`limit`, `unpriced_model`).
CREATE OR REPLACE FUNCTION loopfleet_budget_reserve(p_session_id text, p_lease_token bigint, p_call_key text, p_tokens bigint, p_picousd bigint)
RETURNS TABLE (
  r_status text, r_reason text, r_budget_id bigint, r_scope text, r_tenant text, r_agent text, r_session_id text,
  r_unit text, r_period text, r_window_start timestamptz, r_limit bigint, r_used bigint, r_reserved bigint
)
LANGUAGE plpgsql AS $$
DECLARE
  v_session record;
  v_now timestamptz;
  v_budget record;
  v_need bigint;
  v_left bigint;
  v_old_calls text[];
  v_old_ids bigint[];
  v_old_windows timestamptz[];
  v_ids bigint[] := '{}';
  v_windows timestamptz[] := '{}';
  v_amounts bigint[] := '{}';
BEGIN
  SELECT s.tenant, s.agent, s.lease_token, s.parent_session_id INTO v_session FROM sessions s WHERE s.id = p_session_id;
  IF NOT FOUND OR v_session.lease_token <> p_lease_token THEN
    r_status := 'stale';
    RETURN NEXT;
    RETURN;
  END IF;
  -- The common case, a tenant without budgets: one index probe and out.
  IF NOT EXISTS (SELECT 1 FROM budgets b WHERE b.tenant = v_session.tenant) THEN
    r_status := 'none';
    RETURN NEXT;
    RETURN;
  END IF;
  v_now := loopfleet_now();

  SELECT coalesce(array_agg(o.call_key), '{}'), coalesce(array_agg(o.budget_id), '{}'), coalesce(array_agg(o.window_start), '{}')
    INTO v_old_calls, v_old_ids, v_old_windows
    FROM (SELECT r.call_key, r.budget_id, r.window_start FROM budget_reservations r
           WHERE r.session_id = p_session_id ORDER BY r.call_key, r.budget_id FOR UPDATE) AS o;

  PERFORM loopfleet_budget_lock_usage(k.ids, k.wins, k.creates)
    FROM (SELECT array_agg(x.id) AS ids, array_agg(x.win) AS wins, array_agg(x.create_row) AS creates
            FROM (SELECT o.id, o.win, false AS create_row FROM unnest(v_old_ids, v_old_windows) AS o(id, win)
                  UNION ALL
                  SELECT a.id, loopfleet_budget_window(a.period, v_now), true
                    FROM loopfleet_budget_applicable(v_session.tenant, v_session.agent, p_session_id, v_session.parent_session_id) a) AS x) AS k
   WHERE k.ids IS NOT NULL;

  IF cardinality(v_old_ids) > 0 THEN
    WITH gone AS (
      DELETE FROM budget_reservations r
       USING unnest(v_old_calls, v_old_ids) AS o(call_key, id)
       WHERE r.session_id = p_session_id AND r.call_key = o.call_key AND r.budget_id = o.id
      RETURNING r.budget_id, r.window_start, r.amount
    ), sums AS (
      SELECT g.budget_id, g.window_start, sum(g.amount)::bigint AS amount FROM gone g GROUP BY g.budget_id, g.window_start
    )
    UPDATE budget_usage u SET reserved = greatest(0, u.reserved - sums.amount), updated_at = now()
      FROM sums WHERE u.budget_id = sums.budget_id AND u.window_start = sums.window_start;
  END IF;

  FOR v_budget IN
    SELECT a.id, a.scope, a.tenant, a.agent, a.session_id, a.unit, a.period, a.limit_amount, u.window_start, u.used, u.reserved
      FROM loopfleet_budget_applicable(v_session.tenant, v_session.agent, p_session_id, v_session.parent_session_id) a
      JOIN budget_usage u ON u.budget_id = a.id AND u.window_start = loopfleet_budget_window(a.period, v_now)
     ORDER BY a.id
  LOOP
    r_reason := NULL;
    IF v_budget.unit = 'usd' AND p_picousd IS NULL THEN
      -- A cap that cannot be measured is not a cap.
      r_reason := 'unpriced_model';
    ELSE
      v_need := CASE v_budget.unit WHEN 'tokens' THEN p_tokens ELSE p_picousd END;
      v_left := v_budget.limit_amount - v_budget.used - v_budget.reserved;
      -- A reservation short of the worst case may overshoot; only one such may be in flight per
      -- budget, so it is granted only when nothing else is reserved (docs/budgets.md, the bound).
      IF v_left <= 0 OR (v_left < v_need AND v_budget.reserved > 0) THEN
        r_reason := 'limit';
      END IF;
    END IF;
    IF r_reason IS NOT NULL THEN
      r_status := 'refused';
      r_budget_id := v_budget.id;
      r_scope := v_budget.scope;
      r_tenant := v_budget.tenant;
      r_agent := v_budget.agent;
      r_session_id := v_budget.session_id;
      r_unit := v_budget.unit;
      r_period := v_budget.period;
      r_window_start := v_budget.window_start;
      r_limit := v_budget.limit_amount;
      r_used := v_budget.used;
      r_reserved := v_budget.reserved;
      RETURN NEXT;
      RETURN;
    END IF;
    v_ids := v_ids || v_budget.id;
    v_windows := v_windows || v_budget.window_start;
    v_amounts := v_amounts || least(v_need, v_left);
  END LOOP;

  IF cardinality(v_ids) = 0 THEN
    r_status := 'none';
    RETURN NEXT;
    RETURN;
  END IF;
  INSERT INTO budget_reservations AS r (session_id, call_key, budget_id, window_start, amount, lease_token)
    SELECT p_session_id, p_call_key, k.id, k.win, k.amount, p_lease_token FROM unnest(v_ids, v_windows, v_amounts) AS k(id, win, amount)
    ON CONFLICT (session_id, call_key, budget_id) DO UPDATE SET amount = r.amount + excluded.amount, lease_token = excluded.lease_token;
  UPDATE budget_usage u SET reserved = u.reserved + k.amount, updated_at = now()
    FROM unnest(v_ids, v_windows, v_amounts) AS k(id, win, amount)
   WHERE u.budget_id = k.id AND u.window_start = k.win;
  r_status := 'reserved';
  RETURN NEXT;
END
$$;--> statement-breakpoint

-- Settles one call: its reservations go, `used` grows by the actual usage (tokens: prompt +
-- completion; usd: `p_picousd`, or the amount reserved when the model turned out unpriced). When the
-- call's reservations were already given back (its holder was replaced, or the sweeper took them),
-- the call is still charged to the budgets that apply now: what was spent was spent. Returns each
-- budget charged with `used` before and after, so exactly one settle sees a threshold crossed.
CREATE OR REPLACE FUNCTION loopfleet_budget_settle(p_session_id text, p_call_key text, p_tokens bigint, p_picousd bigint)
RETURNS TABLE (
  r_budget_id bigint, r_scope text, r_unit text, r_period text, r_window_start timestamptz, r_limit bigint, r_used_before bigint, r_used_after bigint
)
LANGUAGE plpgsql AS $$
DECLARE
  v_ids bigint[];
  v_windows timestamptz[];
  v_session record;
  v_now timestamptz;
BEGIN
  SELECT coalesce(array_agg(o.budget_id), '{}'), coalesce(array_agg(o.window_start), '{}') INTO v_ids, v_windows
    FROM (SELECT r.budget_id, r.window_start FROM budget_reservations r
           WHERE r.session_id = p_session_id AND r.call_key = p_call_key ORDER BY r.budget_id FOR UPDATE) AS o;
  IF cardinality(v_ids) > 0 THEN
    PERFORM loopfleet_budget_lock_usage(v_ids, v_windows, array_fill(false, ARRAY[cardinality(v_ids)]));
    RETURN QUERY
    WITH gone AS (
      DELETE FROM budget_reservations r
       WHERE r.session_id = p_session_id AND r.call_key = p_call_key AND r.budget_id = ANY (v_ids)
      RETURNING r.budget_id, r.window_start, r.amount
    ), charged AS (
      SELECT g.budget_id, g.window_start, g.amount, b.scope, b.unit, b.period, b.limit_amount,
             CASE b.unit WHEN 'tokens' THEN p_tokens ELSE coalesce(p_picousd, g.amount) END AS charge
        FROM gone g JOIN budgets b ON b.id = g.budget_id
    )
    UPDATE budget_usage u
       SET used = u.used + c.charge, reserved = greatest(0, u.reserved - c.amount), updated_at = now()
      FROM charged c
     WHERE u.budget_id = c.budget_id AND u.window_start = c.window_start
    RETURNING u.budget_id, c.scope, c.unit, c.period, u.window_start, c.limit_amount, u.used - c.charge, u.used;
    RETURN;
  END IF;
  IF p_tokens = 0 AND coalesce(p_picousd, 0) = 0 THEN
    RETURN;
  END IF;
  SELECT s.tenant, s.agent, s.parent_session_id INTO v_session FROM sessions s WHERE s.id = p_session_id;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  v_now := loopfleet_now();
  SELECT coalesce(array_agg(a.id ORDER BY a.id), '{}'), coalesce(array_agg(loopfleet_budget_window(a.period, v_now) ORDER BY a.id), '{}')
    INTO v_ids, v_windows
    FROM loopfleet_budget_applicable(v_session.tenant, v_session.agent, p_session_id, v_session.parent_session_id) a;
  IF cardinality(v_ids) = 0 THEN
    RETURN;
  END IF;
  PERFORM loopfleet_budget_lock_usage(v_ids, v_windows, array_fill(true, ARRAY[cardinality(v_ids)]));
  RETURN QUERY
  WITH charged AS (
    SELECT k.id, k.win, b.scope, b.unit, b.period, b.limit_amount,
           CASE b.unit WHEN 'tokens' THEN p_tokens ELSE coalesce(p_picousd, 0) END AS charge
      FROM unnest(v_ids, v_windows) AS k(id, win) JOIN budgets b ON b.id = k.id
  )
  UPDATE budget_usage u SET used = u.used + c.charge, updated_at = now()
    FROM charged c
   WHERE u.budget_id = c.id AND u.window_start = c.win
  RETURNING u.budget_id, c.scope, c.unit, c.period, u.window_start, c.limit_amount, u.used - c.charge, u.used;
END
$$;--> statement-breakpoint

-- The sweeper's part: gives back reservations whose holder is gone — the session's lease lapsed or
-- was released, or its token is no longer the session's — at most `p_limit` of them, skipping rows a
-- reserve or settle holds right now. Returns how many were given back.
CREATE OR REPLACE FUNCTION loopfleet_budget_release_stale(p_limit integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  v_sessions text[];
  v_calls text[];
  v_ids bigint[];
  v_windows timestamptz[];
BEGIN
  SELECT coalesce(array_agg(o.session_id), '{}'), coalesce(array_agg(o.call_key), '{}'), coalesce(array_agg(o.budget_id), '{}'), coalesce(array_agg(o.window_start), '{}')
    INTO v_sessions, v_calls, v_ids, v_windows
    FROM (SELECT r.session_id, r.call_key, r.budget_id, r.window_start
            FROM budget_reservations r JOIN sessions s ON s.id = r.session_id
           WHERE s.lease_token <> r.lease_token OR s.lease_expires_at IS NULL OR s.lease_expires_at <= now()
           ORDER BY r.session_id, r.call_key, r.budget_id
           LIMIT p_limit
             FOR UPDATE OF r SKIP LOCKED) AS o;
  IF cardinality(v_ids) = 0 THEN
    RETURN 0;
  END IF;
  PERFORM loopfleet_budget_lock_usage(v_ids, v_windows, array_fill(false, ARRAY[cardinality(v_ids)]));
  WITH gone AS (
    DELETE FROM budget_reservations r
     USING unnest(v_sessions, v_calls, v_ids) AS o(session_id, call_key, id)
     WHERE r.session_id = o.session_id AND r.call_key = o.call_key AND r.budget_id = o.id
    RETURNING r.budget_id, r.window_start, r.amount
  ), sums AS (
    SELECT g.budget_id, g.window_start, sum(g.amount)::bigint AS amount FROM gone g GROUP BY g.budget_id, g.window_start
  )
  UPDATE budget_usage u SET reserved = greatest(0, u.reserved - sums.amount), updated_at = now()
    FROM sums WHERE u.budget_id = sums.budget_id AND u.window_start = sums.window_start;
  RETURN cardinality(v_ids);
END
$$;
