import { InMemorySessionStore } from '../../support/fakes/in-memory-session-store.js';
import { sessionStoreContract } from '../../contract/session-store-contract.js';

/** The fake the loop's unit tests run on must keep the very contract the Postgres store keeps. */
sessionStoreContract('InMemorySessionStore', async () => {
  const store = new InMemorySessionStore();
  return { store, registry: store.agents, close: async () => {} };
});
