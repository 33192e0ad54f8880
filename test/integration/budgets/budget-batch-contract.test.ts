import type { BudgetPort } from '../../../src/core/ports/budgets.js';
import { releaseStaleReservations, settleBudgets } from '../../../src/store/budgets/settle-budget.js';
import { reserveBudgets } from '../../../src/store/budgets/reserve-budget.js';
import { createPgPool } from '../../../src/store/postgres/pool.js';
import { PostgresSessionStore } from '../../../src/store/postgres-session-store.js';
import type pg from 'pg';
import { budgetPortContract } from '../../contract/budget-port-contract.js';
import { createTestDatabase } from '../../support/test-database.js';

/**
 * The shared `BudgetPort` contract against migration 0013's batch functions: every reserve and
 * settle goes through `loopfleet_budget_reserve_batch` / `loopfleet_budget_settle_batch`, even
 * alone, so a batch of one behaves as the single-call functions do.
 */
budgetPortContract('batch statements', async () => {
  const db = await createTestDatabase('budget_batch_contract');
  const pool = createPgPool(db.url, { applicationName: 'loopfleet-test-budget-batch', maxConnections: 5 });
  return {
    store: new PostgresSessionStore(pool),
    budgets: batchOnly(pool),
    setBudget: async (budget) => {
      const result = await pool.query<{ id: string }>(
        `INSERT INTO budgets (scope, tenant, agent, session_id, unit, period, limit_amount) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (tenant, scope, agent, session_id, unit, period) DO UPDATE SET limit_amount = excluded.limit_amount, updated_at = now()
         RETURNING id::text`,
        [budget.scope, budget.tenant, budget.agent ?? '', budget.sessionId ?? '', budget.unit, budget.period, budget.limit],
      );
      return Number(result.rows[0]!.id);
    },
    usage: async (id) => {
      const result = await pool.query<{ used: string; reserved: string }>(
        `SELECT u.used::text, u.reserved::text FROM budget_usage u JOIN budgets b ON b.id = u.budget_id
          WHERE u.budget_id = $1 AND u.window_start = loopfleet_budget_window(b.period, loopfleet_now())`,
        [id],
      );
      return { used: Number(result.rows[0]?.used ?? 0), reserved: Number(result.rows[0]?.reserved ?? 0) };
    },
    close: async () => {
      await pool.end();
      await db.drop();
    },
  };
});

/** A port whose every call is a batch of one. */
function batchOnly(pool: pg.Pool): BudgetPort {
  return {
    reserve: async (request) => {
      const [outcome] = await reserveBudgets(pool, [request]);
      if (outcome instanceof Error) throw outcome;
      return outcome!;
    },
    settle: async (request) => (await settleBudgets(pool, [request]))[0]!,
    releaseStale: (limit) => releaseStaleReservations(pool, limit),
  };
}
