import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { SignJWT } from 'jose';
import type { GatewayConfig } from '../../../src/config/gateway-config.js';
import { buildGateway } from '../../../src/gateway/build-gateway.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { Gates, routingLlm } from '../producer/routing-llm.js';

export const SECRET = 'gateway-test-secret-of-at-least-32-bytes';

/** The gateway's settings in tests: HS256 auth, overridable. */
export function gatewayConfig(overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  return Object.assign(
    {
      port: 0,
      host: '127.0.0.1',
      auth: { mode: 'jwt' as const, secret: SECRET, jwksUrl: null, issuer: null, audience: null },
      corsOrigins: [],
      rateLimitPerMinute: 100_000,
      bodyLimitBytes: 1_048_576 + 65_536,
      sseHeartbeatMs: 15_000,
      maxWaitMs: 60_000,
    },
    overrides,
  );
}

/** An HS256 token with these claims, valid for an hour unless `exp` says otherwise. */
export async function token(claims: Record<string, unknown>, options: { secret?: string; exp?: number | string } = {}): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime(options.exp ?? '1h')
    .sign(new TextEncoder().encode(options.secret ?? SECRET));
}

/** `Authorization` header of a token. */
export const bearer = (jwt: string): Record<string, string> => ({ authorization: `Bearer ${jwt}` });

/**
 * A real fleet (private database, its own queue, one in-process worker whose model holds `hold:<gate>`
 * inputs until the gate opens and asks on `ask:`), a queue, a Redis connection and a gateway app on it.
 */
export class GatewayFixture {
  private constructor(
    readonly gates: Gates,
    readonly fleet: FleetFixture,
    readonly queue: SessionQueue,
    readonly redis: Redis,
    readonly app: FastifyInstance,
  ) {}

  static async create(label: string, config: Partial<GatewayConfig> = {}): Promise<GatewayFixture> {
    const fleet = await FleetFixture.create(label);
    const gates = new Gates();
    await fleet.startWorker({ llm: routingLlm(gates) });
    const redis = new Redis(fleet.config.redisUrl, { maxRetriesPerRequest: 2 });
    const queue = new SessionQueue({ databaseUrl: fleet.config.databaseUrl, redis, queueName: fleet.config.queueName });
    const app = await buildGateway({ queue, config: gatewayConfig(config), redis, pingDatabase: async () => void (await fleet.pool.query('select 1')) });
    return new GatewayFixture(gates, fleet, queue, redis, app);
  }

  async close(): Promise<void> {
    this.gates.openAll();
    await this.app.close();
    await this.queue.close();
    this.redis.disconnect();
    await this.fleet.close();
  }
}
