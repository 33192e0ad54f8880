/**
 * Entry of a follower child (`fanout-followers.ts`): holds gateway SSE followers or raw `XREAD BLOCK`
 * followers and times the stamped events they receive. Protocol: `bench-child.ts`.
 */
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Redis } from 'ioredis';
import { serveBenchChild } from './bench-child.js';
import type { FollowerCounts, FollowerReport, FollowerRequest } from './fanout-followers.js';
import { monotonicMs, pool } from './stats.js';

/** Longest wait for a follower's response headers. */
const CONNECT_TIMEOUT_MS = 30_000;

const counts: FollowerCounts = { followers: 0, received: 0, inWindow: 0, gaps: 0, ended: 0 };
let window = { from: Number.POSITIVE_INFINITY, to: Number.POSITIVE_INFINITY };
const delays: number[] = [];
const responses: IncomingMessage[] = [];
const connections: Redis[] = [];
let closing = false;
const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });

/** The publish stamp in an entry's data (`"text":"<ms>"`), or NaN. Cheaper than parsing the JSON. */
function stampOf(data: string): number {
  const at = data.indexOf('"text":"');
  if (at < 0) return Number.NaN;
  const start = at + 8;
  return Number(data.slice(start, data.indexOf('"', start)));
}

function record(stamp: number, now: number): void {
  counts.received += 1;
  if (stamp >= window.from && stamp < window.to) {
    counts.inWindow += 1;
    delays.push(Math.round((now - stamp) * 1000) / 1000);
  }
}

/** Handles the complete SSE events in `text`: `event: <type>` / `data: <json>` blocks. */
function sseEvents(text: string, now: number): void {
  for (const block of text.split('\n\n')) {
    if (block.length === 0 || block.startsWith(':')) continue; // heartbeat comment
    if (block.includes('event: gap')) {
      counts.gaps += 1;
      continue;
    }
    const dataAt = block.indexOf('data:');
    if (dataAt >= 0) record(stampOf(block.slice(dataAt)), now);
  }
}

function openSse(url: string, token: string, sessionId: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/v1/sessions/${encodeURIComponent(sessionId)}/events`, { agent, headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } }, (response) => {
      req.setTimeout(0);
      if (response.statusCode !== 200) {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => reject(new Error(`SSE ${sessionId}: ${response.statusCode} ${body.slice(0, 300)}`)));
        return;
      }
      responses.push(response);
      counts.followers += 1;
      response.setEncoding('utf8');
      let buffer = '';
      response.on('data', (chunk: string) => {
        const now = monotonicMs();
        buffer += chunk;
        const end = buffer.lastIndexOf('\n\n');
        if (end < 0) return;
        sseEvents(buffer.slice(0, end), now);
        buffer = buffer.slice(end + 2);
      });
      const ended = () => void (closing || (counts.ended += 1));
      response.once('end', ended);
      response.once('error', ended);
      resolve();
    });
    req.once('error', reject);
    // A gateway that never answers must fail the bench, not hang it.
    req.setTimeout(CONNECT_TIMEOUT_MS, () => req.destroy(new Error(`SSE ${sessionId}: no response within ${CONNECT_TIMEOUT_MS} ms`)));
    req.end();
  });
}

type XReadReply = [key: string, entries: [id: string, fields: string[]][]][] | null;

async function openXread(redisUrl: string, key: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  connections.push(redis);
  await new Promise<void>((resolve, reject) => {
    redis.once('ready', () => resolve());
    redis.once('error', reject);
  });
  counts.followers += 1;
  void (async () => {
    let last = '$';
    while (!closing) {
      let reply: XReadReply;
      try {
        reply = (await redis.xread('COUNT', 1000, 'BLOCK', 0, 'STREAMS', key, last)) as XReadReply;
      } catch {
        if (!closing) counts.ended += 1;
        return;
      }
      const now = monotonicMs();
      for (const [, entries] of reply ?? []) {
        for (const [id, fields] of entries) {
          last = id;
          const dataIndex = fields.indexOf('data');
          record(dataIndex < 0 ? Number.NaN : stampOf(fields[dataIndex + 1]!), now);
        }
      }
    }
  })();
}

async function handle(message: FollowerRequest): Promise<unknown> {
  switch (message.type) {
    case 'sse': {
      const started = performance.now();
      await pool(message.sessionIds, message.concurrency, (sessionId) => openSse(message.url, message.token, sessionId));
      return { open: counts.followers, ms: Math.round(performance.now() - started) };
    }
    case 'xread': {
      const started = performance.now();
      await pool(message.streamKeys, message.concurrency, (key) => openXread(message.redisUrl, key));
      return { open: counts.followers, ms: Math.round(performance.now() - started) };
    }
    case 'window':
      window = { from: message.from, to: message.to };
      return {};
    case 'counts':
      return Object.assign({}, counts);
    case 'report':
      return Object.assign({}, counts, { delays }) satisfies FollowerReport;
  }
}

serveBenchChild<FollowerRequest>({
  ready: {},
  handle,
  async close() {
    closing = true;
    for (const response of responses) response.destroy();
    agent.destroy();
    for (const redis of connections) redis.disconnect();
  },
});
