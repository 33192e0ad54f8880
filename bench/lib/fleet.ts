/**
 * What the fleet benchmarks share: a private database (created, migrated, dropped), a private queue
 * name, an in-process worker configured like production, the standard input's model (scripted, and a
 * request-aware fake OpenAI server on loopback for the real SDK), the no-op tool, and counters of
 * Postgres commits and Redis commands.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Redis } from 'ioredis';
import { loadConfig, type ResolvedConfig } from '../../src/config/index.js';
import type { LlmCallOptions, LlmRequest, LlmResponse } from '../../src/core/ports/llm.js';
import type { SessionStore, StepCommit } from '../../src/core/ports/session-store.js';
import { currentTimeTool, ToolRegistry, type AnyToolDefinition } from '../../src/core/tools/index.js';
import { systemClock } from '../../src/core/ports/clock.js';
import { ScriptedLlm, type ScriptedReply } from '../../src/llm/scripted-llm.js';
import { createLogger } from '../../src/observability/logger.js';
import { BatchQueue } from '../../src/store/batching/batch-queue.js';
import { quoteIdent, runMigrations } from '../../src/store/postgres/migrate.js';
import { applyHeapGrowth } from '../../src/worker/heap-growth.js';
import { startWorker, type RunningWorker, type StartWorkerOptions } from '../../src/worker/start-worker.js';
import { maxSemiSpaceMb, WORKER_NODE_FLAGS, WORKER_SEMI_SPACE_MB } from '../../src/worker/young-generation.js';
import { textEvents, toolCallEvents } from '../../test/support/fake-openai/script.js';
import { writeStream } from '../../test/support/fake-openai/write-response.js';
import benchToolDefinitions from './bench-tools.mjs';

export const ADMIN_URL = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export const silentLogger = () => createLogger({ level: 'silent', format: 'json', redactContent: true });

export function uniqueName(label: string): string {
  return `lf_bench_${label}_${randomBytes(4).toString('hex')}`;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
  /** `pg_stat_database.xact_commit` of this database (its own commits only). */
  commits(): Promise<number>;
}

const cleanups = new Set<() => Promise<void>>();

/** Runs every registered cleanup (databases to drop, processes to stop); used on a time-out too. */
export async function cleanupAll(): Promise<void> {
  for (const cleanup of [...cleanups].reverse()) await cleanup().catch(() => undefined);
  cleanups.clear();
}

export function onCleanup(fn: () => Promise<void>): () => void {
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}

/** CREATE DATABASE lf_bench_<random>, migrated; `drop()` removes it (also on time-out). */
export async function createBenchDatabase(label: string): Promise<BenchDatabase> {
  const name = uniqueName(label);
  await admin((client) => client.query(`CREATE DATABASE ${quoteIdent(name)}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const dbUrl = url.toString();
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await admin((client) => client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
  };
  const unregister = onCleanup(drop);
  await runMigrations({ databaseUrl: dbUrl });
  return {
    name,
    url: dbUrl,
    drop: async () => {
      unregister();
      await drop();
    },
    commits: () =>
      admin(async (client) => {
        // pg_stat is a snapshot per transaction: clear it so the read is fresh.
        await client.query('SELECT pg_stat_clear_snapshot()');
        const result = await client.query<{ c: string }>('SELECT xact_commit AS c FROM pg_stat_database WHERE datname = $1', [name]);
        return Number(result.rows[0]?.c ?? 0);
      }),
  };
}

/** Deletes every Redis key of `queue` (`<queue>:*` and `bull:<queue>:*`), never anything else. */
export async function deleteQueueKeys(redis: Redis, queue: string): Promise<void> {
  for (const pattern of [`${queue}:*`, `bull:${queue}:*`]) await deleteMatchingKeys(redis, pattern);
}

/** Deletes the keys matching `pattern`, a SCAN page at a time. */
export async function deleteMatchingKeys(redis: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

const TUNABLE = ['DATABASE_BATCH_SIZE', 'DATABASE_BATCH_STATEMENTS', 'DATABASE_BATCH_OVERLAP_MIN', 'WINDOW_CACHE_MB', 'WINDOW_CACHE_MIN_MESSAGES'];

export function benchConfig(env: Record<string, string>): ResolvedConfig {
  // The group-commit and window-cache settings may be set from outside, to compare them on the same workload.
  const tuning = Object.fromEntries(TUNABLE.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]])));
  return loadConfig({ REDIS_URL, LLM_PROVIDER: 'scripted', LOG_LEVEL: 'silent', METRICS_PORT: '0', ...tuning, ...env });
}

/**
 * The no-op tool the standard input calls (plus the built-ins every worker has): the definition in
 * `bench-tools.mjs`, which compiled `loopfleet worker` processes load as their `LOOPFLEET_TOOLS`.
 */
export function benchTools(): ToolRegistry {
  return ToolRegistry.from([currentTimeTool(systemClock) as AnyToolDefinition, ...benchToolDefinitions]);
}

export const ANSWER_CHUNKS = 10;

/** True when the request is the second call of the standard input (the tool result is last). */
export function afterTool(messages: readonly { role: string }[]): boolean {
  return messages.at(-1)?.role === 'tool';
}

/**
 * The standard input through the in-process `scripted` provider: the first call returns one call of
 * `noop`, the second streams the answer in 10 deltas. `chunk(i)` makes each delta's text (the latency
 * bench stamps the emit time in it); `delayMs` simulates a slow model on every call.
 */
export class StandardScriptedLlm extends ScriptedLlm {
  readonly #step: (request: LlmRequest) => ScriptedReply;

  constructor(options: { delayMs?: number; chunk?: (index: number) => string } = {}) {
    super([], { whenExhausted: 'error', recordRequests: false });
    const chunk = options.chunk ?? ((index: number) => `word${index} `);
    const delay = options.delayMs === undefined ? {} : { delayMs: options.delayMs };
    this.#step = (request) =>
      afterTool(request.messages)
        ? { chunks: Array.from({ length: ANSWER_CHUNKS }, (_, i) => chunk(i)), ...delay, usage: { promptTokens: 40, completionTokens: 20 } }
        : { toolCalls: [{ name: 'noop', arguments: {} }], ...delay, usage: { promptTokens: 30, completionTokens: 5 } };
  }

  override complete(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    // One script step per call, decided by the request (so interleaved sessions each get theirs).
    this.push((req) => this.#step(req));
    return super.complete(request, options);
  }
}

/** How the bench's fake OpenAI server answers. */
export interface StandardOpenAiServerOptions {
  /** Milliseconds before each response's headers (a slow model). */
  delayMs?: number;
  /**
   * Holds every first call (the one that answers with the tool call) until this many first calls have
   * arrived, then lets each take its `delayMs`: a window in which all of them are in flight at once
   * (the concurrency bench). Released anyway after `holdTimeoutMs` (default 60 s), or on close.
   */
  holdFirstCalls?: number;
  holdTimeoutMs?: number;
}

/** Moments of the hold (`holdFirstCalls`) the caller wants to see as they happen. */
export interface StandardOpenAiServerHooks {
  /** The last of the held first calls arrived: all of them are in flight now. */
  onHoldReleased?(): void;
  /** The first held call's response was written in full (its `delayMs` over). */
  onFirstHeldAnswered?(): void;
}

/**
 * A loopback OpenAI Chat Completions endpoint that answers by request content (the test fake answers
 * from a FIFO queue, which interleaved sessions cannot use): the standard input's tool call, then its
 * 10-delta answer, in the real SSE framing (`writeStream` of the test fake). Options: {@link StandardOpenAiServerOptions}.
 */
export async function startStandardOpenAiServer(
  options: StandardOpenAiServerOptions = {},
  hooks: StandardOpenAiServerHooks = {},
): Promise<{ url: string; requests: () => number; peakInFlight: () => number; close: () => Promise<void> }> {
  let count = 0;
  let inFlight = 0;
  let peakInFlight = 0;
  let firstHeldAnswered = false;
  // The hold (`holdFirstCalls`): first calls wait here until that many have arrived (or the hold times out).
  let firstCalls = 0;
  let releaseHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    releaseHeld = resolve;
  });
  const holdTimer = options.holdFirstCalls === undefined ? null : setTimeout(() => releaseHeld(), options.holdTimeoutMs ?? 60_000);
  const pendingDelays = new Set<() => void>();
  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        pendingDelays.delete(finish);
        resolve();
      }, ms);
      const finish = () => {
        clearTimeout(timer);
        resolve();
      };
      pendingDelays.add(finish);
    });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    res.on('error', () => undefined);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: string; messages: { role: string }[]; stream_options?: { include_usage?: boolean } };
    const n = ++count;
    inFlight += 1;
    peakInFlight = Math.max(peakInFlight, inFlight);
    res.once('close', () => (inFlight -= 1));
    if (options.holdFirstCalls !== undefined && !afterTool(body.messages)) {
      firstCalls += 1;
      if (firstCalls === options.holdFirstCalls) {
        hooks.onHoldReleased?.();
        releaseHeld();
      }
      await held;
    }
    const events = afterTool(body.messages)
      ? textEvents(Array.from({ length: ANSWER_CHUNKS }, (_, i) => `word${i} `))
      : toolCallEvents([{ id: `call_${n}`, name: 'noop', arguments: '{}' }], { pieces: 1 });
    await writeStream(
      res,
      { kind: 'stream', events, ...(options.delayMs === undefined ? {} : { headersDelayMs: options.delayMs }) },
      {
        requestId: `req_${n}`,
        completionId: `chatcmpl-${n}`,
        model: body.model ?? 'bench',
        includeUsage: body.stream_options?.include_usage === true,
        delay,
      },
    );
    if (options.holdFirstCalls !== undefined && !firstHeldAnswered && !afterTool(body.messages)) {
      firstHeldAnswered = true;
      hooks.onFirstHeldAnswered?.();
    }
  };
  const server = createServer((req, res) => void handle(req, res));
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: () => count,
    peakInFlight: () => peakInFlight,
    close: () =>
      new Promise<void>((resolve) => {
        if (holdTimer !== null) clearTimeout(holdTimer);
        releaseHeld();
        for (const finish of pendingDelays) finish();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a fleet bench opens and must close, whatever happened. */
export interface FleetBenchParts {
  worker: RunningWorker | null;
  /** A `SessionQueue`, or a producer process (anything closed the same way). */
  producer: { close(): Promise<void> };
  redis: Redis;
  queueName: string;
  db: BenchDatabase;
}

/**
 * Closes a fleet bench in order — the worker (given 5 s to finish, then aborted when `force`), the
 * producer, the queue's Redis keys, the connection, the database — then every registered cleanup.
 */
export async function closeFleetBench(parts: FleetBenchParts, options: { force?: boolean } = {}): Promise<void> {
  await parts.worker?.close({ graceMs: 5_000, ...(options.force === true ? { force: true } : {}) });
  await parts.producer.close();
  await deleteQueueKeys(parts.redis, parts.queueName);
  await parts.redis.quit();
  await parts.db.drop();
  await cleanupAll();
}

/**
 * Starts an in-process worker with the bench's defaults (silent logger, no health server, bench tools),
 * and sets V8's heap growth as `loopfleet worker` does (`WORKER_HEAP_GROWTH_PERCENT`, default 100): the
 * bench process is then the worker's process, GC included. Its young generation is node's flag, which
 * only the command line can set (`npm run bench` does): without it, says so once.
 */
let warnedSemiSpace = false;

export function startBenchWorker(config: ResolvedConfig, options: StartWorkerOptions = {}): Promise<RunningWorker> {
  applyHeapGrowth(config.worker.heapGrowthPercent);
  if (maxSemiSpaceMb() !== WORKER_SEMI_SPACE_MB && !warnedSemiSpace) {
    warnedSemiSpace = true;
    console.error(`bench: this process runs the worker without ${WORKER_NODE_FLAGS.join(' ')} (a deployed worker's young generation); npm run bench passes it, or run: node ${WORKER_NODE_FLAGS.join(' ')} --import tsx <bench file>`);
  }
  return startWorker(config, { logger: silentLogger(), healthServer: false, tools: benchTools(), ...options });
}

export interface PgCounts {
  statements: number;
  /** Transactions that wrote (explicit BEGIN…COMMIT with a write, or a write statement on its own): each one a durable commit (WAL flush). */
  writeCommits: number;
  /** Read-only transactions and statements (no WAL flush). */
  readOnly: number;
  /** Statements that carried rows of several sessions (group commit: `$1` a JSON array of records). */
  batchedStatements: number;
  /** Rows (one session's write each) those statements carried. */
  batchedRows: number;
}

const WRITE = /\b(insert|update|delete|nextval)\b/i;

/**
 * Counts statements sent by every pg client of this process (BEGIN and COMMIT included), and
 * classifies transactions as writing (a durable commit) or read-only, by the statements' text. Cheap
 * enough to leave on in timed runs: a named (prepared) statement is classified once, and group-commit
 * batches are counted where they are formed (`BatchQueue`), not by parsing their rows again.
 */
export function countPgStatements(): { read: () => PgCounts; restore: () => void } {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const open = new WeakMap<object, { write: boolean }>();
  const writesByName = new Map<string, boolean>();
  const counts: PgCounts = { statements: 0, writeCommits: 0, readOnly: 0, batchedStatements: 0, batchedRows: 0 };
  proto.query = function (this: object, ...args: unknown[]) {
    counts.statements += 1;
    const first = args[0] as string | { text?: string; name?: string } | undefined;
    const name = typeof first === 'object' ? first.name : undefined;
    const text = typeof first === 'string' ? first : (first?.text ?? '');
    const head = text.trimStart().slice(0, 8).toUpperCase();
    let writes = name === undefined ? undefined : writesByName.get(name);
    if (writes === undefined) {
      writes = WRITE.test(text);
      if (name !== undefined) writesByName.set(name, writes);
    }
    const tx = open.get(this);
    if (head.startsWith('BEGIN')) open.set(this, { write: false });
    else if (head.startsWith('COMMIT') || head.startsWith('ROLLBACK')) {
      if (tx?.write === true && head.startsWith('COMMIT')) counts.writeCommits += 1;
      else counts.readOnly += 1;
      open.delete(this);
    } else if (tx !== undefined) tx.write ||= writes;
    else if (writes) counts.writeCommits += 1;
    else counts.readOnly += 1;
    return original.apply(this, args);
  };
  // Group commit: each round trip of the row batcher ("write" queue) and how many sessions' rows it carried.
  const queue = BatchQueue.prototype as unknown as { dispatch: (this: unknown, batch: unknown[]) => Promise<void> };
  const dispatch = queue.dispatch;
  if (typeof dispatch !== 'function') throw new Error('bench: BatchQueue.dispatch not found; update countPgStatements');
  queue.dispatch = function (this: unknown, batch: unknown[]) {
    if (isRowBatch(batch)) {
      counts.batchedStatements += 1;
      counts.batchedRows += batch.length;
    }
    return dispatch.call(this, batch);
  };
  return {
    read: () => ({ ...counts }),
    restore: () => {
      proto.query = original;
      queue.dispatch = dispatch;
    },
  };
}

/** A batch of the row batcher: its items are rows with a statement (reads carry a kind instead). */
function isRowBatch(batch: unknown[]): boolean {
  const item = (batch[0] as { item?: { statement?: unknown } } | undefined)?.item;
  return typeof item === 'object' && item !== null && 'statement' in item;
}

/** Counts commands sent by every ioredis client of this process, by command name (pipelined ones included). */
export function countRedisCommands(): { read: () => Record<string, number>; restore: () => void } {
  const proto = Redis.prototype as unknown as { sendCommand: (command: { name: string }, ...rest: unknown[]) => unknown };
  const original = proto.sendCommand;
  const counts: Record<string, number> = {};
  proto.sendCommand = function (this: unknown, command: { name: string }, ...rest: unknown[]) {
    counts[command.name] = (counts[command.name] ?? 0) + 1;
    return original.call(this, command, ...rest);
  };
  return { read: () => ({ ...counts }), restore: () => void (proto.sendCommand = original) };
}

/** Parsed `INFO commandstats` calls per command. */
export async function commandStats(redis: Redis): Promise<Record<string, number>> {
  const text = await redis.info('commandstats');
  const stats: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match) stats[match[1]!] = Number(match[2]);
  }
  return stats;
}

export function diffCounts(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const diff: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const delta = value - (before[key] ?? 0);
    if (delta > 0) diff[key] = delta;
  }
  return diff;
}

/** `store`, calling `after(step)` once each of its step commits has succeeded (in-memory: no load added). */
export function afterCommitStep(store: SessionStore, after: (step: StepCommit) => void): SessionStore {
  return new Proxy(store, {
    get: (target, prop, receiver) => {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== 'commitStep' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return async (step: StepCommit) => {
        const result = await (value as SessionStore['commitStep']).call(target, step);
        after(step);
        return result;
      };
    },
  });
}

/**
 * Observes the worker's store: counts inputs that reached a terminal status (by status) as their
 * final step commits, and resolves `waitFor(n)` when `n` have. In-memory, so it adds no load.
 */
export class FinishCounter {
  finished = 0;
  readonly byStatus: Record<string, number> = {};
  /** Error codes (and the first message of each) of inputs that did not end `done`. */
  readonly errors: Record<string, { count: number; message: string }> = {};
  #waiters: { n: number; resolve: () => void }[] = [];

  readonly wrapStore = (store: SessionStore): SessionStore =>
    afterCommitStep(store, (step) => {
      if (step.input === undefined) return;
      this.#record(step.input.status);
      if (step.input.errorCode !== undefined) {
        const entry = (this.errors[step.input.errorCode] ??= { count: 0, message: (step.input.errorMessage ?? '').slice(0, 200) });
        entry.count += 1;
      }
    });

  #record(status: string): void {
    this.finished += 1;
    this.byStatus[status] = (this.byStatus[status] ?? 0) + 1;
    this.#waiters = this.#waiters.filter((waiter) => {
      if (this.finished < waiter.n) return true;
      waiter.resolve();
      return false;
    });
  }

  waitFor(n: number, timeoutMs: number): Promise<void> {
    if (this.finished >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out: ${this.finished}/${n} inputs finished after ${timeoutMs} ms`)), timeoutMs);
      this.#waiters.push({
        n,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }
}
