import { describe, inject } from 'vitest';
import { PostgresAgentRegistry } from '../../../src/store/agents/postgres-agent-registry.js';
import { PostgresSessionStore } from '../../../src/store/postgres-session-store.js';
import { runMigrations } from '../../../src/store/postgres/migrate.js';
import { createPgPool } from '../../../src/store/postgres/pool.js';
import { sessionStoreContract } from '../../contract/session-store-contract.js';
import { PGBOUNCER_MISSING, pgbouncerAvailable, startPgBouncer } from '../../support/pgbouncer.js';
import { createTestDatabase } from '../../support/test-database.js';

/**
 * The shared `SessionStore` contract, unchanged, with the store's pool behind PgBouncer 1.18 in
 * transaction mode (`pooler: 'transaction'`), migrated through it too. 4 server connections for the
 * pool's 25 clients, so the contract's races meet on shared server connections.
 */
if (!pgbouncerAvailable()) {
  console.warn(`store contract through PgBouncer: ${PGBOUNCER_MISSING}`);
  describe.skip('PostgresSessionStore through PgBouncer (skipped: no pgbouncer)', () => {});
} else {
  sessionStoreContract('PostgresSessionStore through PgBouncer (transaction mode)', async () => {
    const bouncer = await startPgBouncer(inject('postgresAdminUrl'), { poolSize: 4 });
    const db = await createTestDatabase('store_contract_pgb', { migrate: false });
    const url = bouncer.via(db.url);
    await runMigrations({ databaseUrl: url });
    const pool = createPgPool(url, { applicationName: 'loopfleet-test-store-contract-pgb', maxConnections: 25, pooler: 'transaction' });
    return {
      store: new PostgresSessionStore(pool),
      registry: new PostgresAgentRegistry(pool),
      close: async () => {
        await pool.end();
        await db.drop();
        await bouncer.stop();
      },
    };
  });
}
