/**
 * The gateway as `loopfleet gateway` runs it — config from the environment, a `SessionQueue`, a Redis
 * connection, `buildGateway`, listening on `--port` — for a tree where the CLI command is not there
 * yet (`BENCH_SSE_GATEWAY=build`). Stops on SIGTERM/SIGINT.
 */
import { Redis } from 'ioredis';
import { loadGatewayConfig } from '../../src/config/index.js';
import { buildGateway } from '../../src/gateway/build-gateway.js';
import { SessionQueue } from '../../src/producer/session-queue.js';

const { client, gateway: config } = loadGatewayConfig(process.env);
const portAt = process.argv.indexOf('--port');
const port = portAt < 0 ? config.port : Number(process.argv[portAt + 1]);
const queue = new SessionQueue({ databaseUrl: client.databaseUrl, redisUrl: client.redisUrl, queueName: client.queueName });
const redis = new Redis(client.redisUrl);
const app = await buildGateway({ queue, config, redis });
await app.listen({ port, host: config.host });
const stop = () =>
  void app
    .close()
    .then(() => queue.close())
    .then(() => redis.quit())
    .finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
