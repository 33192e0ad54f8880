import type { ClientStore } from './client-store.js';
import type { FleetStore } from './fleet-store.js';
import type { LoopStore } from './loop-store.js';

export type * from './store-records.js';

/**
 * The whole system of record: what the loop ({@link LoopStore}), a worker's drain ({@link FleetStore})
 * and the client ({@link ClientStore}) use, together. The Postgres implementation lives in
 * `src/store`; an in-memory fake implements the same contract for unit tests. A caller that needs
 * one side takes that port.
 */
export interface SessionStore extends LoopStore, FleetStore, ClientStore {}
