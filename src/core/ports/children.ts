import type { RunOutcome, Usage } from '../session-types.js';

/**
 * Child sessions as the `spawn_agent` tool sees them (docs/child-sessions.md). The worker binds the
 * port to the store (the child session and its first input, in one statement), the drain queue (the
 * child's kick) and the child's event stream (`input_accepted`).
 */
export interface ChildrenPort {
  /**
   * Creates the child session with `task` as its first input, once. Its id is derived from the
   * parent and the call (`<parent>:sub:<toolCallId>`, or a hash of them when that is no valid
   * session id), so a second call for the same call (retried, recovered) finds it and starts nothing. Fenced by the
   * parent's lease. Refuses (writing nothing) when the parent input already spawned
   * `maxChildrenPerInput` children.
   */
  spawn(request: Omit<SpawnRequest, 'childSessionId'>): Promise<SpawnOutcome>;
}

/** What `spawn_agent` asks the fleet to start. */
export interface SpawnRequest {
  parentSessionId: string;
  /** The parent's lease token: a stale holder spawns nothing. */
  leaseToken: number;
  /** The parent input whose call spawns the child. */
  inputSeq: number;
  toolCallId: string;
  childSessionId: string;
  /** The child's agent. */
  agent: string;
  /** The child's first input, verbatim. */
  task: string;
  wait: boolean;
  /** The parent's root (the parent's own id when it is a root). */
  rootSessionId: string;
  /**
   * The parent's tenant, which the child takes: its kick joins that tenant's line (fair dispatch). The
   * loop always sets it; the store reads the tenant from the parent row whatever this says.
   */
  tenant?: string;
  /** The child's depth: the parent's + 1. */
  depth: number;
  maxChildrenPerInput: number;
}

/** `created`: a new child. `existing`: this call's child was already there. `refused`: too many children for this input. */
export type SpawnOutcome = { kind: 'created' | 'existing'; childSessionId: string } | { kind: 'refused'; reason: 'too_many_children'; limit: number };

/**
 * A child's outcome as delivered to its parent: the payload of the parent's `child` input
 * (`wait: true` calls read it back from the inbox; `wait: false` ones get it as a steered message).
 */
export interface ChildResultPayload {
  toolCallId: string;
  childSessionId: string;
  agent: string;
  /** The status the child's input ended with. */
  status: RunOutcome;
  /** What the parent's tool call gets: the child's final text (or structured output as JSON), or a note naming the status and error code. */
  text: string;
  errorCode: string | null;
  usage: Usage;
  wait: boolean;
}
