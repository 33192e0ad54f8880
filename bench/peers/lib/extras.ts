/**
 * What a system module may add to the contract (`system.ts`), read by the harness when present. The
 * contract stays as it is; these are for systems that do not write the shared `InputEvents` (loopfleet
 * writes its own entries) or have no model (the BullMQ floor).
 */
import type { PeerContext, PeerSystem } from './system.js';

/** One input as the producer added it (the producer process stamps `addedAt` just before the add). */
export interface AddedInput {
  inputId: string;
  sessionId: string;
  addedAt: number;
}

export interface PeerSystemExtras {
  /** The model kinds the system runs with (default both); the floor has no model. */
  modelKinds?: Array<PeerContext['modelKind']>;
  /**
   * Accept → start latencies (ms) of `added`, for a system whose worker does not push them to
   * `peers:<runId>:starts`: called in the orchestrator after the phase's inputs all finished, so the
   * reading is outside the measured window.
   */
  startLatencies?(ctx: PeerContext, added: readonly AddedInput[]): Promise<number[]>;
}

export type HarnessSystem = PeerSystem & PeerSystemExtras;

/** Session `<prefix>-<i % sessions>`, input id `<prefix>-<i>`: the same in the producer and the orchestrator. */
export function plannedInput(prefix: string, i: number, sessions: number): { sessionId: string; inputId: string; text: string } {
  return { sessionId: `${prefix}-s${i % sessions}`, inputId: `${prefix}-i${i}`, text: `standard input ${i}: please call noop` };
}
