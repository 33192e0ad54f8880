import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStreamKey } from '../../../src/fleet/fleet-keys.js';
import { buildGateway } from '../../../src/gateway/build-gateway.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { redisClusterAvailable, startRedisCluster, type RunningRedisCluster } from '../../support/redis-cluster.js';
import { streamGatewayConfig, token } from '../gateway/fixtures/stream-gateway.js';

/** The gateway on a Redis Cluster: its routes that read a session's stream find it under the shard's tag. */
describe.skipIf(!redisClusterAvailable())('the gateway on a Redis Cluster', () => {
  let cluster: RunningRedisCluster;
  let fleet: FleetFixture;
  let queue: SessionQueue;
  let app: FastifyInstance;
  let url: string;
  let auth: Record<string, string>;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    fleet = await FleetFixture.create('cluster_gw', { REDIS_CLUSTER_NODES: cluster.nodesEnv, LOOPFLEET_QUEUE_SHARDS: '3' });
    await fleet.startWorker();
    queue = new SessionQueue({ pool: fleet.pool, redisClusterNodes: cluster.nodesEnv, queueShards: 3, queueName: fleet.config.queueName });
    app = await buildGateway({ queue, config: streamGatewayConfig(), redis: fleet.redis });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    auth = { authorization: `Bearer ${await token({ tenant: 'default', scope: 'write' })}` };
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await queue?.close();
    await fleet?.close();
    await cluster?.stop();
  });

  it('answers a chat turn through the AI SDK transport, streamed from the session under its shard tag', async () => {
    const transport = new DefaultChatTransport<UIMessage>({ api: `${url}/v1/chat`, headers: auth, fetch });
    const stream = await transport.sendMessages({
      chatId: 'gw-chat-1',
      messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hello cluster' }] }],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    let message: UIMessage | undefined;
    for await (const rebuilt of readUIMessageStream({ stream })) message = rebuilt;
    expect(message?.parts.map((part) => (part.type === 'text' ? part.text : '')).join('')).toBe('Echo: hello cluster');
  }, 60_000);

  it('serves the SSE events of a session and its view, with the last event id of its stream', async () => {
    await (await queue.add('send', { sessionId: 'gw-view-1', input: 'hi' })).result({ timeoutMs: 30_000 });
    const view = (await (await fetch(`${url}/v1/sessions/gw-view-1`, { headers: auth })).json()) as { eventCursor: string | null };
    const stop = new AbortController();
    const response = await fetch(`${url}/v1/sessions/gw-view-1/events?after=0`, { headers: auth, signal: stop.signal });
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes('input_finished')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    stop.abort();
    expect(text).toContain('input_accepted');
    expect(text).toContain('input_finished');
    // The view's cursor is the id of the newest entry of this session's stream ('0' would mean the key was not found).
    const [last] = await fleet.redis.xrevrange(eventStreamKey(fleet.shards.layout, 'gw-view-1'), '+', '-', 'COUNT', 1);
    expect(view.eventCursor).toBe(last![0]);
  }, 60_000);
});
