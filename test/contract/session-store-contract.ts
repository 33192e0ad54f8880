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
import type { AgentRegistry } from '../../src/core/ports/agent-registry.js';
import type { SessionStore } from '../../src/core/ports/session-store.js';
import { sessionIds, type ContractContext, type OpenedStore, type StoreFactory } from './contract-helpers.js';
import { acceptInputScenarios } from './scenarios/client/accept-input.js';
import { agentChoiceScenarios } from './scenarios/client/agent-choice.js';
import { childSessionScenarios } from './scenarios/client/children.js';
import { childScenarios } from './scenarios/fleet/children.js';
import { parkScenarios } from './scenarios/loop/park.js';
import { registryScenarios } from './scenarios/registry/agents.js';
import { claimScenarios } from './scenarios/fleet/claim.js';
import { compactionScenarios } from './scenarios/loop/compaction.js';
import { drainStartScenarios } from './scenarios/fleet/drain-start.js';
import { fencingScenarios } from './scenarios/fleet/fencing.js';
import { finishScenarios } from './scenarios/loop/finish.js';
import { historyPageScenarios } from './scenarios/client/history-pages.js';
import { leaseScenarios } from './scenarios/fleet/lease.js';
import { ledgerUsageScenarios } from './scenarios/loop/ledger-usage.js';
import { messageScenarios } from './scenarios/loop/messages.js';
import { pendingInputScenarios } from './scenarios/loop/pending-inputs.js';
import { queryScenarios } from './scenarios/client/queries.js';
import { sessionScenarios } from './scenarios/client/sessions.js';
import { sessionListScenarios } from './scenarios/client/session-list.js';
import { queueScenarios } from './scenarios/client/queues.js';
import { tenantScenarios } from './scenarios/client/tenants.js';
import { budgetAdminScenarios } from './scenarios/admin/budgets.js';
import { usageReportScenarios } from './scenarios/admin/usage-report.js';
import { tenantSettingsScenarios } from './scenarios/admin/tenant-settings.js';
import { steerScenarios } from './scenarios/loop/steer.js';

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
      get registry(): AgentRegistry {
        if (opened === undefined) throw new Error('the store is opened in beforeAll; use ctx.registry inside tests only');
        return opened.registry;
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

    // Grouped by the port each scenario is about (ClientStore, FleetStore, AgentRegistry, LoopStore); every one runs
    // on the whole store, since setting a scenario up takes the other ports too.
    describe('client port', () => {
      sessionScenarios(ctx);
      acceptInputScenarios(ctx);
      agentChoiceScenarios(ctx);
      tenantScenarios(ctx);
      queueScenarios(ctx);
      sessionListScenarios(ctx);
      queryScenarios(ctx);
      historyPageScenarios(ctx);
      childSessionScenarios(ctx);
    });
    describe('operator surfaces', () => {
      budgetAdminScenarios(ctx);
      usageReportScenarios(ctx);
      tenantSettingsScenarios(ctx);
    });
    describe('fleet port', () => {
      leaseScenarios(ctx);
      fencingScenarios(ctx);
      claimScenarios(ctx);
      drainStartScenarios(ctx);
      childScenarios(ctx);
    });
    describe('agent registry', () => {
      registryScenarios(ctx);
    });
    describe('loop port', () => {
      messageScenarios(ctx);
      ledgerUsageScenarios(ctx);
      compactionScenarios(ctx);
      steerScenarios(ctx);
      finishScenarios(ctx);
      pendingInputScenarios(ctx);
      parkScenarios(ctx);
    });
  });
}
