/**
 * The shared contract of the `SessionStore` port: one suite of scenarios that both the
 * Postgres store and the in-memory fake must pass, so the fake the loop's unit tests run on cannot
 * drift from the system of record. The scenarios use the port only; each one works on session ids
 * of its own, so all of them can share one store (one database).
 *
 * Run it from a test file:
 *
 *     sessionStoreContract('PostgresSessionStore', async () => ({ store, close }));
 */
import { afterAll, beforeAll, describe } from 'vitest';
import type { SessionStore } from '../../src/core/ports/session-store.js';
import { sessionIds, type ContractContext, type OpenedStore, type StoreFactory } from './contract-helpers.js';
import { acceptInputScenarios } from './scenarios/accept-input.js';
import { claimScenarios } from './scenarios/claim.js';
import { compactionScenarios } from './scenarios/compaction.js';
import { drainStartScenarios } from './scenarios/drain-start.js';
import { fencingScenarios } from './scenarios/fencing.js';
import { finishScenarios } from './scenarios/finish.js';
import { historyPageScenarios } from './scenarios/history-pages.js';
import { leaseScenarios } from './scenarios/lease.js';
import { ledgerUsageScenarios } from './scenarios/ledger-usage.js';
import { messageScenarios } from './scenarios/messages.js';
import { pendingInputScenarios } from './scenarios/pending-inputs.js';
import { queryScenarios } from './scenarios/queries.js';
import { sessionScenarios } from './scenarios/sessions.js';
import { steerScenarios } from './scenarios/steer.js';

export type { OpenedStore, StoreFactory } from './contract-helpers.js';

/**
 * Declares `describe(name, …)` with every contract scenario, run against the store `factory` opens
 * (once, before the scenarios; closed after them).
 */
export function sessionStoreContract(name: string, factory: StoreFactory): void {
  describe(name, () => {
    let opened: OpenedStore | undefined;
    const ctx: ContractContext = {
      get store(): SessionStore {
        if (opened === undefined) throw new Error('the store is opened in beforeAll; use ctx.store inside tests only');
        return opened.store;
      },
      now: () => (opened?.now ?? Date.now)(),
      id: sessionIds(),
    };

    beforeAll(async () => {
      opened = await factory();
    });

    afterAll(async () => {
      await opened?.close();
    });

    sessionScenarios(ctx);
    acceptInputScenarios(ctx);
    leaseScenarios(ctx);
    fencingScenarios(ctx);
    claimScenarios(ctx);
    drainStartScenarios(ctx);
    messageScenarios(ctx);
    ledgerUsageScenarios(ctx);
    compactionScenarios(ctx);
    steerScenarios(ctx);
    finishScenarios(ctx);
    pendingInputScenarios(ctx);
    queryScenarios(ctx);
    historyPageScenarios(ctx);
  });
}
