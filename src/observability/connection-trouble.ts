import type { Logger } from 'pino';
import { isConnectionFailure } from './connection-failure.js';

/** How often one component may log its connection trouble: at most one record per this many ms. */
export const CONNECTION_TROUBLE_INTERVAL_MS = 5000;

/** What {@link ConnectionTrouble} logs about one failure: never the stack, never a command's arguments. */
interface TroubleSummary {
  code?: string;
  message: string;
}

/** Options of {@link ConnectionTrouble}. */
export interface ConnectionTroubleOptions {
  /** Which connection this is, e.g. `redis`, `redis.subscriber`, `bullmq.queue`. Logged as `component`. */
  component: string;
  /** `host:port` of the server, logged as `address` (never a URL: it may carry a password). */
  address: string;
  /** Least time between two records, in milliseconds. Default {@link CONNECTION_TROUBLE_INTERVAL_MS}. */
  intervalMs?: number;
  /** Clock in milliseconds. Default `Date.now`. */
  now?: () => number;
}

/**
 * Logs a connection's failures as one-line JSON records, at most one per component per interval.
 * A reconnecting client fails again every few hundred milliseconds while its server is away; each
 * record counts the failures it stood for (`suppressed`) instead of repeating them. Only the error's
 * code and first message line are logged: a stack is noise to an operator, and a failed command's
 * arguments may hold a password.
 */
export class ConnectionTrouble {
  readonly #logger: Logger;
  readonly #component: string;
  readonly #address: string;
  readonly #intervalMs: number;
  readonly #now: () => number;
  #lastAt: number | null = null;
  #suppressed = 0;
  #failing = false;

  constructor(logger: Logger, options: ConnectionTroubleOptions) {
    this.#logger = logger;
    this.#component = options.component;
    this.#address = options.address;
    this.#intervalMs = options.intervalMs ?? CONNECTION_TROUBLE_INTERVAL_MS;
    this.#now = options.now ?? Date.now;
  }

  /** One failure of the connection: logged, or counted until the interval has passed. */
  failed(error: unknown): void {
    this.#failing = true;
    const now = this.#now();
    if (this.#lastAt !== null && now - this.#lastAt < this.#intervalMs) {
      this.#suppressed += 1;
      return;
    }
    this.#lastAt = now;
    const suppressed = this.#suppressed;
    this.#suppressed = 0;
    this.#logger.warn(
      { component: this.#component, address: this.#address, error: summarise(error), suppressed },
      `connection trouble: ${this.#component} at ${this.#address}`,
    );
  }

  /** The connection works again: one record, with the failures not logged since the last one. */
  recovered(): void {
    if (!this.#failing) return;
    this.#failing = false;
    const suppressed = this.#suppressed;
    this.#suppressed = 0;
    this.#lastAt = null;
    this.#logger.info({ component: this.#component, address: this.#address, suppressed }, `connection back: ${this.#component} at ${this.#address}`);
  }
}

/** The error's code and the first line of its message, without the failed command's arguments. */
function summarise(error: unknown): TroubleSummary {
  if (!(error instanceof Error)) return { message: String(error).split('\n')[0] ?? '' };
  const code = (error as { code?: unknown }).code;
  const message = error.message.split('\n')[0] ?? '';
  return typeof code === 'string' ? { code, message } : { message };
}

/** BullMQ finishing or moving a job whose keys are no longer in Redis. */
const MISSING_JOB_KEY = /^Missing key for job /;

/** Redis refusing the connection itself (credentials, permissions, a server loading or read-only): connection trouble too. */
const SERVER_REFUSALS = /^(WRONGPASS|NOAUTH|NOPERM|LOADING|READONLY|MASTERDOWN)/;

/** What {@link watchConnection} needs of an ioredis client, a BullMQ queue or worker: their events. */
export interface ConnectionEvents {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Routes a client's `error` events (and, for an ioredis client, `ready`) to a rate-limited
 * {@link ConnectionTrouble}. Without an `error` listener ioredis prints "Unhandled error event" and
 * BullMQ prints the error with `console.error`: multi-line stack traces past the logger.
 */
export function watchConnection(target: ConnectionEvents, logger: Logger, options: ConnectionTroubleOptions & { alsoOtherErrors?: boolean }): ConnectionTrouble {
  const trouble = new ConnectionTrouble(logger, options);
  target.on('error', (error) => {
    const message = String((error as { message?: unknown } | null)?.message ?? '');
    // A job's keys gone from under BullMQ as it finishes the job: Redis lost data (a restart without
    // persistence, a failover before replication) or the job was removed. Postgres holds the input
    // and the sweeper runs it again: a warning naming the job, not a stack.
    if (options.alsoOtherErrors === true && MISSING_JOB_KEY.test(message)) {
      logger.warn({ component: options.component, error: message.split('\n')[0] }, `${options.component}: a job's keys are gone from Redis (lost data, or the job was removed); the sweeper repairs its session`);
      return;
    }
    // A BullMQ queue or worker also emits errors that are not the connection's (a failed script, a
    // bug): those keep their stack, at error level.
    if (options.alsoOtherErrors === true && !isConnectionFailure(error) && !SERVER_REFUSALS.test(message)) {
      logger.error({ component: options.component, err: error }, `${options.component} error`);
      return;
    }
    trouble.failed(error);
  });
  const emitter = target as { on(event: string, listener: () => void): unknown };
  emitter.on('ready', () => trouble.recovered());
  return trouble;
}
