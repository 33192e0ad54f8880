/** Which parts a step has: each one's SQL is in the statement only when it is present. */
export interface StepParts {
  /** Messages to append (at least one). */
  messages: boolean;
  /** A pending state to set, or to clear (null). */
  pending: boolean;
  /** Messages to fold, with the compaction's audit record. */
  compaction: boolean;
  /** Tool-ledger writes (at least one). */
  ledger: boolean;
  /** Usage rounds (at least one). */
  usage: boolean;
  /** Pending inputs delivered into the running one. */
  steer: boolean;
  /** The input this step ends. */
  finish: boolean;
}
