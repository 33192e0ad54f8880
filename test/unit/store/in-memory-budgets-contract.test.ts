import { InMemoryBudgets } from '../../support/fakes/in-memory-budgets.js';
import { InMemorySessionStore } from '../../support/fakes/in-memory-session-store.js';
import { budgetPortContract } from '../../contract/budget-port-contract.js';

/** The shared `BudgetPort` contract against the in-memory fake. */
budgetPortContract('InMemoryBudgets', async () => {
  const store = new InMemorySessionStore();
  const budgets = new InMemoryBudgets((id) => store.sessionNow(id));
  return {
    store,
    budgets,
    setBudget: async (budget) => budgets.setBudget(budget),
    usage: async (id) => budgets.usage(id),
    close: async () => undefined,
  };
});
