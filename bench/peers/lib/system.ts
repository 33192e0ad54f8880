/**
 * The contract every system of the peers benchmark implements (`bench/peers/systems/<name>.ts`, default
 * export a `PeerSystem`). The orchestrator (`bench/peers/run.ts`) creates a database per system run,
 * calls `setup` in its own process, `startWorker` in a worker process, `createProducer` in a producer
 * process, drives the load, then `verify` and `teardown`.
 *
 * The standard input, the same on every system: load the session's history (the system's own idiom);
 * write the `started` entries; model call 1 (returns one `noop` tool call) as a durable step; the
 * `noop` tool as a durable step; model call 2 (streams 10 deltas, each written as an entry) as a
 * durable step; append the input's messages to the history; write the `finished` entries. One input at
 * a time per session, in add order. Durability: fsync and synchronous_commit on (the defaults).
 */
import type { StandardModel } from './standard.js';

export interface PeerContext {
  /** A fresh database for this system's run (created and dropped by the orchestrator). */
  pgUrl: string;
  redisUrl: string;
  /** Unique per run: prefix queue names, tables, keys with it when the system allows. */
  runId: string;
  /** `scripted` (in process) or `openai` (the real SDK against the loopback fake server). */
  modelKind: 'scripted' | 'openai';
  /** Base URL of the fake OpenAI server when `modelKind` is `openai`. */
  openaiBaseUrl?: string;
  /** One point of the system's sweep (`PeerSystem.sweep`). */
  settings: Record<string, string | number>;
}

/** One input as the producer adds it. */
export interface StandardInput {
  sessionId: string;
  /** Unique per input; the idempotency key where the system has one. */
  inputId: string;
  text: string;
  /** `Date.now()` just before the system's own add call: accept → start latency is measured from it. */
  addedAt: number;
}

export interface PeerWorker {
  /** Stops processing and closes every connection. */
  stop(): Promise<void>;
}

export interface PeerProducer {
  /** Adds one input through the system's own client; resolves when the system accepted it. */
  add(input: StandardInput): Promise<void>;
  close(): Promise<void>;
}

export interface VerifyResult {
  ok: boolean;
  /** Inputs whose history rows are all there. */
  historyInputs: number;
  /** What is wrong, when not ok. */
  problems: string[];
}

export interface PeerSystem {
  name: string;
  /** The package versions used, recorded in the JSON (e.g. `{ 'graphile-worker': '0.17.1' }`). */
  versions(): Record<string, string>;
  /**
   * The node binary for this system's worker and producer processes, when it is not the harness's own
   * (a peer whose current version needs Node 22: `nodeBinary: node22()` from `lib/node22.ts`). Recorded.
   */
  nodeBinary?: string;
  /** The settings to try; the best (highest inputs/s) is kept and recorded. At least one point. */
  sweep: Array<Record<string, string | number>>;
  /**
   * In the orchestrator: schema, migrations, servers the system needs (their pids for CPU and RSS). It
   * may add entries to `ctx.settings` (a server's URLs): the worker and producer processes get the
   * settings as they are after `setup`.
   */
  setup(ctx: PeerContext): Promise<{ serverPids: number[] }>;
  /** In the worker process: starts processing inputs. `model` is the standard model for `ctx.modelKind`. */
  startWorker(ctx: PeerContext, model: StandardModel): Promise<PeerWorker>;
  /** In the producer process. */
  createProducer(ctx: PeerContext): Promise<PeerProducer>;
  /** In the orchestrator, after a run: every input's history is durable, in add order per session. */
  verify(ctx: PeerContext, expected: ReadonlyMap<string, readonly string[]>): Promise<VerifyResult>;
  /** In the orchestrator: stops the servers `setup` started. The database is dropped by the orchestrator. */
  teardown(ctx: PeerContext): Promise<void>;
}
