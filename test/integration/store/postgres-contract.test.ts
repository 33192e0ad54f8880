import { createPgPool } from '../../../src/store/postgres/pool.js';
import { PostgresAgentRegistry } from '../../../src/store/agents/postgres-agent-registry.js';
import { PostgresSessionStore } from '../../../src/store/postgres-session-store.js';
import { sessionStoreContract } from '../../contract/session-store-contract.js';
import { createTestDatabase } from '../../support/test-database.js';

/**
 * The shared `SessionStore` contract against the real store: one private, migrated database for the
 * file; every scenario works on session ids of its own.
 */
sessionStoreContract('PostgresSessionStore', async () => {
  const db = await createTestDatabase('store_contract');
  // More connections than the widest race in the contract (20 accepts), so races really contend.
  const pool = createPgPool(db.url, { applicationName: 'loopfleet-test-store-contract', maxConnections: 25 });
  return {
    store: new PostgresSessionStore(pool),
    registry: new PostgresAgentRegistry(pool),
    close: async () => {
      await pool.end();
      await db.drop();
    },
  };
});
