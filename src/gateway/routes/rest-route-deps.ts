import type { RedisConnection } from '../../fleet/redis-connection.js';
import type { GatewayConfig } from '../../config/gateway-config.js';
import type { SessionQueue } from '../../producer/session-queue.js';

/** What the REST routes share. */
export interface RestRouteDeps {
  queue: SessionQueue;
  config: GatewayConfig;
  /** For the session view's event cursor; the cursor is null without it. */
  redis: RedisConnection | undefined;
}
