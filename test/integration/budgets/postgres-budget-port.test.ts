import { createPgPool } from '../../../src/store/postgres/pool.js';
import { PostgresBudgetPort } from '../../../src/store/budgets/postgres-budget-port.js';
import { PostgresSessionStore } from '../../../src/store/postgres-session-store.js';
import { budgetPortContract } from '../../contract/budget-port-contract.js';
import { createTestDatabase } from '../../support/test-database.js';

/** The shared `BudgetPort` contract against migration 0010's functions, in a private database. */
budgetPortContract('PostgresBudgetPort', async () => {
  const db = await createTestDatabase('budget_port');
  const pool = createPgPool(db.url, { applicationName: 'loopfleet-test-budget-port', maxConnections: 5 });
  return {
    store: new PostgresSessionStore(pool),
    budgets: new PostgresBudgetPort(pool),
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
