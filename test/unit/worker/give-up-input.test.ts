import { InMemorySessionStore } from '../../support/fakes/in-memory-session-store.js';
import { giveUpScenarios } from '../../support/give-up-scenarios.js';

/** The poison-input stop and the session's stats, on the in-memory store with a manual clock. */
let clock = Date.parse('2030-01-01T00:00:00Z');
const store = new InMemorySessionStore(() => clock);
let counter = 0;

giveUpScenarios('giveUpInput (in-memory store)', {
  store,
  // Past any lease the scenarios take (60 s).
  lapse: async () => {
    clock += 120_000;
  },
  id: (label) => `${label}-${(counter += 1)}`,
});
