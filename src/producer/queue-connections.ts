import { connectionLayout, openRedis, type RedisConnection } from '../fleet/redis-connection.js';
import { QueueShards } from '../fleet/queue-shards.js';
import type pg from 'pg';
import { ChannelSubscriptions } from '../events/channel-subscriptions.js';
import { closeConnection } from '../events/dedicated-connection.js';
import { publisherConnection, RedisEventPublisher } from '../events/event-publisher.js';
import { NotifiedTails } from '../events/notified-tails.js';
import type { ClientStore } from '../core/ports/client-store.js';
import { guardStore } from '../core/ports/guard-store.js';
import type { FairDispatch } from '../fleet/kick.js';
import { fairDispatch, tenantSettingsCache } from '../store/tenants/tenant-settings-source.js';
import { createPgPool } from '../store/postgres/pool.js';
import { PostgresSessionStore } from '../store/postgres-session-store.js';
import { PostgresTimerStore } from '../store/timers/postgres-timer-store.js';
import type { TimerStore } from '../core/ports/timer-store.js';
import type { AgentRegistry } from '../core/ports/agent-registry.js';
import { PostgresAgentRegistry } from '../store/agents/postgres-agent-registry.js';
import { FinishNotices } from './finish-notices.js';
import type { ResolvedQueueOptions } from './session-queue-options.js';
import { settleWithin } from '../fleet/settle-within.js';
import { watchConnection, type ConnectionEvents } from '../observability/connection-trouble.js';
import { serverAddress } from '../config/redact-url.js';

/** What a {@link SessionQueue} talks to: the store on Postgres, Redis, the BullMQ queue and an event publisher. */
export interface QueueConnections {
  pool: pg.Pool;
  /** Its failures that are not typed (connection, SQL) reach the caller as `system.infrastructure`. */
  store: ClientStore;
  /** The timer rows; failures unwrapped (the timer admin wraps each call). */
  timers: TimerStore;
  /** The agent registry; failures unwrapped (`SessionQueue.agents` wraps them). */
  registry: AgentRegistry;
  redis: RedisConnection;
  queue: QueueShards;
  /** Fair dispatch for this producer's kicks; null when `fairDispatch` is off. */
  fair: FairDispatch | null;
  publisher: RedisEventPublisher;
  /** `result()`'s subscriptions to the finish announcements, on the queue's subscribed connection (opened at the first listener). */
  finishes: FinishNotices;
  /** The event followers' tails: their announcements on the same subscribed connection, their reads on one shared connection. */
  tails: NotifiedTails;
  /** Closes what was opened here, never what the caller passed in. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens (or adopts) the connections. Connecting happens in the background (Redis) or on first use
 * (Postgres), so constructing a queue never fails on a network problem — the first call that needs
 * the unreachable service does.
 */
export function openQueueConnections(options: ResolvedQueueOptions): QueueConnections {
  const log = options.logger;
  const ownsPool = options.pool === null;
  const pool =
    options.pool ??
    createPgPool(options.databaseUrl, {
      applicationName: 'loopfleet-client',
      maxConnections: options.poolSize,
      pooler: options.pooler,
      statementTimeoutMs: options.statementTimeoutMs,
      onIdleClientError: (error) => log?.warn({ err: error }, 'idle postgres connection failed'),
    });
  const ownsRedis = options.redis === null;
  const redis = options.redis ?? openRedis({ url: options.redisUrl, clusterNodes: options.redisClusterNodes });
  const layout = connectionLayout(redis, options.queueName, options.queueShards);
  const queue = QueueShards.open(layout, redis);
  // The publisher's own connection: a script call is never re-sent after a reconnect (publisherConnection).
  const events = publisherConnection(redis);
  // Without a listener ioredis prints every reconnect failure and BullMQ its queue's errors, stacks
  // and all; commands still reject on their own. One rate-limited record per connection instead.
  const address = serverAddress(options.redisUrl, 6379);
  const watched: [string, ConnectionEvents][] = [['client.events', events], ...queue.queues.map((shard): [string, ConnectionEvents] => ['client.queue', shard])];
  if (ownsRedis) watched.push(['client.redis', redis]);
  for (const [component, target] of watched) {
    if (log === null) target.on('error', () => undefined);
    else watchConnection(target, log, { component, address, alsoOtherErrors: component === 'client.queue' });
  }
  const publisher = new RedisEventPublisher(events, {
    ownsConnection: true,
    queueName: options.queueName,
    queueShards: options.queueShards,
    // Its writes trim the stream and push its expiry back: to the workers' retention, not a default.
    maxLen: options.events.maxLen,
    idleExpirySeconds: options.events.idleExpirySeconds,
    // Producers publish one `input_accepted` at a time: nothing to merge.
    coalesceMs: 0,
    onError: (error, context) => log?.warn({ err: error, ...context }, 'event publish failed'),
  });
  const channels = new ChannelSubscriptions(redis, log);
  const finishes = new FinishNotices(channels, layout);
  const tails = new NotifiedTails(redis, channels, layout, log);
  let closing: Promise<void> | null = null;
  const close = async (): Promise<void> => {
    await settleWithin(channels.close(), options.redisTimeoutMs);
    await settleWithin(tails.close(), options.redisTimeoutMs);
    await settleWithin(publisher.close(), options.redisTimeoutMs);
    // The publisher quits its connection; while Redis is down that waits, and the bound above gives up on it.
    await closeConnection(events);
    await settleWithin(queue.close(), options.redisTimeoutMs);
    if (ownsRedis) await closeConnection(redis);
    if (ownsPool) await pool.end();
  };
  return {
    pool,
    store: guardStore(new PostgresSessionStore(pool, { batch: options.batch })),
    timers: new PostgresTimerStore(pool),
    registry: new PostgresAgentRegistry(pool),
    redis,
    queue,
    fair: fairDispatch(options.fairDispatch, tenantSettingsCache(pool, (error) => log?.warn({ err: error }, 'tenant settings not read; their defaults apply for now')), redis),
    publisher,
    finishes,
    tails,
    close: () => (closing ??= close()),
  };
}
