import type { RedisConnection } from './redis-connection.js';
import type { Logger } from 'pino';
import { TenantRateLimitedError } from '../core/errors/index.js';
import { DEFAULT_TENANT } from './tenant-name.js';
import { takeAdmission } from './tenant-rate-bucket.js';
import { attemptWithin, type Attempt } from './settle-within.js';

async function attempt<T>(pending: Promise<T>): Promise<Attempt<T>> {
  return pending.then(
    (value): Attempt<T> => ({ ok: true, value }),
    (error: unknown): Attempt<T> => ({ ok: false, timedOut: false, error }),
  );
}

/** How long one read of the tenants' admission rates is used before the next, ms. */
export const TENANT_RATES_TTL_MS = 2_000;

/** Sessions whose tenant one process remembers (a session's tenant never changes). */
const SESSION_TENANTS_KEPT = 10_000;

/** What {@link TenantAdmission} reads and where its buckets are. */
export interface TenantAdmissionDeps {
  redis: RedisConnection;
  queueName: string;
  /** Every tenant with an admission rate, and the rate (inputs per second). One read for all of them. */
  readRates(): Promise<ReadonlyMap<string, number>>;
  /** The tenant of an existing session, or null when there is none (an add then creates it for `default`). */
  readSessionTenant(sessionId: string): Promise<string | null>;
  logger?: Logger;
  /**
   * Longest wait for the bucket's answer, ms, before the input is admitted unchecked (a reconnecting
   * Redis client queues commands instead of failing them). Default: wait until it answers.
   */
  redisTimeoutMs?: number;
  /** Milliseconds one read of the rates is used; default {@link TENANT_RATES_TTL_MS}. */
  ttlMs?: number;
  now?: () => number;
}

/**
 * The admission rate of tenants at accept (docs/tenant-limits.md): a Redis token bucket per tenant with
 * a `maxInputsPerSecond`, one Lua call per input of such a tenant. What each tenant allows is read
 * from Postgres at most every {@link TENANT_RATES_TTL_MS}, all tenants in one read, so when no tenant
 * has a rate an accept costs nothing more, and a tenant without one costs a map lookup. An add that
 * does not name its tenant is checked against its session's, read once per session and remembered,
 * only while some tenant has a rate. A Redis failure admits the input: the rate is a guard against
 * floods, and the input is durable in Postgres either way.
 */
export class TenantAdmission {
  readonly #deps: TenantAdmissionDeps;
  readonly #ttlMs: number;
  readonly #now: () => number;
  #rates: ReadonlyMap<string, number> | null = null;
  #readAt = 0;
  #reading: Promise<ReadonlyMap<string, number>> | null = null;
  readonly #sessionTenants = new Map<string, string>();

  constructor(deps: TenantAdmissionDeps) {
    this.#deps = deps;
    this.#ttlMs = deps.ttlMs ?? TENANT_RATES_TTL_MS;
    this.#now = deps.now ?? Date.now;
  }

  /**
   * Takes one admission of the input's tenant (`tenant` as the add named it, else its session's).
   * Throws `tenant.rate_limited` with `details.retryAfterMs` when the tenant's bucket is empty.
   */
  async admit(sessionId: string, tenant: string | undefined): Promise<void> {
    const rates = await this.#currentRates();
    if (rates.size === 0) return;
    const name = tenant ?? (await this.#tenantOf(sessionId));
    const rate = rates.get(name);
    if (rate === undefined) return;
    const taking = takeAdmission(this.#deps.redis, this.#deps.queueName, name, rate);
    const answer = this.#deps.redisTimeoutMs === undefined ? await attempt(taking) : await attemptWithin(taking, this.#deps.redisTimeoutMs);
    if (!answer.ok) {
      this.#deps.logger?.warn({ err: answer.error, tenant: name }, 'admission rate not checked (Redis failed or slow); the input is admitted');
      return;
    }
    const retryAfterMs = answer.value;
    if (retryAfterMs > 0) {
      throw new TenantRateLimitedError(`tenant ${name} admits at most ${rate} inputs per second; try again in ${retryAfterMs} ms`, {
        details: { tenant: name, maxInputsPerSecond: rate, retryAfterMs },
      });
    }
  }

  async #currentRates(): Promise<ReadonlyMap<string, number>> {
    if (this.#rates !== null && this.#now() - this.#readAt < this.#ttlMs) return this.#rates;
    // One read at a time, shared by every accept waiting for it.
    this.#reading ??= this.#deps
      .readRates()
      .then((rates) => {
        this.#rates = rates;
        this.#readAt = this.#now();
        return rates;
      })
      .finally(() => {
        this.#reading = null;
      });
    return this.#reading;
  }

  async #tenantOf(sessionId: string): Promise<string> {
    const known = this.#sessionTenants.get(sessionId);
    if (known !== undefined) return known;
    const stored = await this.#deps.readSessionTenant(sessionId);
    // No session yet: the add creates it for the default tenant. Not remembered: it may be created
    // for another tenant meanwhile.
    if (stored === null) return DEFAULT_TENANT;
    if (this.#sessionTenants.size >= SESSION_TENANTS_KEPT) this.#sessionTenants.delete(this.#sessionTenants.keys().next().value!);
    this.#sessionTenants.set(sessionId, stored);
    return stored;
  }
}
