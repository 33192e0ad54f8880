/**
 * SSE fan-out on one gateway process (issue 35): FOLLOWERS followers over SESSIONS sessions on one
 * `loopfleet gateway`, against raw `XREAD BLOCK` followers of the same streams in the same run.
 *
 * - gateway: a compiled `loopfleet gateway` process (JWT auth, as deployed), its own pid.
 * - followers: `GET /v1/sessions/:id/events` with a read token, FOLLOWERS / SESSIONS per session,
 *   spread over GENERATORS load-generator processes (plain `node:http`, one connection each).
 * - reference: RAW_PER_SESSION `XREAD BLOCK` followers per session, one ioredis connection each, in
 *   a process of their own: the cheapest way to follow a stream, with no gateway in between.
 * - producer (this process): `RedisEventPublisher.publish` — the path a worker's events take — of
 *   one `stream_delta` at a time, RATE events/s in all, round-robin over the sessions, each stamped
 *   with its publish time on CLOCK_MONOTONIC (shared by every process of the machine) as its `text`.
 *   `publish`, not a run sink's `emit`: no coalescing window, so the delay is the fan-out's.
 *
 * After WARMUP_S, SECONDS are measured: delivery delay (stamp → the chunk's arrival in the follower)
 * p50/p90/p99 for both follower sets, gateway CPU (utime + stime from `/proc/<pid>/stat`) per
 * delivered event, gateway RSS (idle, with the followers connected, peak `VmHWM`), Redis CPU. Then
 * the producer stops and every follower must get every event stamped in the window.
 *
 * Run: `node --max-semi-space-size=32 --import tsx bench/gateway-sse.bench.ts` (≈ 1 min, compiles
 * dist/ first). Scale: BENCH_SSE_FOLLOWERS (5000), BENCH_SSE_SESSIONS (500), BENCH_SSE_RATE (events/s
 * in all, 1000), BENCH_SSE_SECONDS (20), BENCH_SSE_WARMUP_S (5), BENCH_SSE_GENERATORS (2),
 * BENCH_SSE_RAW_PER_SESSION (1), BENCH_SSE_FROM (`dist`, `source`, or `build`: `buildGateway` in the
 * bench's own entry, for a tree without the CLI command).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { SignJWT } from 'jose';
import { Redis } from 'ioredis';
import { publisherConnection, RedisEventPublisher } from '../src/events/index.js';
import { eventStreamKey } from '../src/fleet/fleet-keys.js';
import { SessionQueue } from '../src/producer/session-queue.js';
import { buildDist, processMemoryMb } from './lib/cli-worker.js';
import { freePort } from '../test/integration/fleet/fixtures/private-redis.js';
import { spawnCliGateway, statCpuMs, type CliGateway, type GatewayFrom } from './lib/cli-gateway.js';
import { startFollowerProcess, type FollowerProcess, type FollowerReport } from './lib/fanout-followers.js';
import { cleanupAll, createBenchDatabase, deleteQueueKeys, REDIS_URL, uniqueName } from './lib/fleet.js';
import { cpuPerItem, cpuSnapshot } from './lib/process-cpu.js';
import { deadline, monotonicMs, percentile, pool, report, round, sleep } from './lib/stats.js';

const env = (name: string, fallback: number) => Number(process.env[`BENCH_SSE_${name}`] ?? fallback);
const FOLLOWERS = env('FOLLOWERS', 5000);
const SESSIONS = env('SESSIONS', 500);
const RATE = env('RATE', 1000);
const SECONDS = env('SECONDS', 20);
const WARMUP_S = env('WARMUP_S', 5);
const GENERATORS = env('GENERATORS', 2);
const RAW_PER_SESSION = env('RAW_PER_SESSION', 1);
const FROM: GatewayFrom = process.env.BENCH_SSE_FROM === 'source' || process.env.BENCH_SSE_FROM === 'build' ? process.env.BENCH_SSE_FROM : 'dist';
const PER_SESSION = FOLLOWERS / SESSIONS;
const GATEWAY_PROCESS: Record<GatewayFrom, string> = {
  dist: 'loopfleet gateway process, compiled (dist/)',
  source: 'loopfleet gateway process, from source (tsx)',
  build: 'buildGateway in a process of its own (bench/lib/gateway-process-main.ts, tsx)',
};
/** Producer tick: each publishes the events due by then (a worker's turn writes many sessions' events too). */
const TICK_MS = 5;
/** Longest wait, after the producer stopped, for every follower to get every event of the window. */
const DRAIN_TIMEOUT_MS = 15_000;
const CONNECT_CONCURRENCY = 100;

if (!Number.isInteger(PER_SESSION) || PER_SESSION < 1) throw new Error(`BENCH_SSE_FOLLOWERS (${FOLLOWERS}) must be a multiple of BENCH_SSE_SESSIONS (${SESSIONS})`);

interface DelayFigures {
  followers: number;
  timed: number;
  expected: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

function delayFigures(reports: FollowerReport[], expected: number): DelayFigures {
  const delays = reports.flatMap((entry) => entry.delays);
  return {
    followers: reports.reduce((sum, entry) => sum + entry.followers, 0),
    timed: delays.length,
    expected,
    p50Ms: round(percentile(delays, 50), 2),
    p90Ms: round(percentile(delays, 90), 2),
    p99Ms: round(percentile(delays, 99), 2),
    maxMs: round(delays.reduce((max, value) => Math.max(max, value), 0), 2),
  };
}

/** Polls the followers until they got `expected` window events in all, or the deadline passes. */
async function drain(followers: FollowerProcess[], expected: number): Promise<number> {
  const until = Date.now() + DRAIN_TIMEOUT_MS;
  let got = 0;
  while (Date.now() < until) {
    got = (await Promise.all(followers.map((follower) => follower.counts()))).reduce((sum, counts) => sum + counts.inWindow, 0);
    if (got >= expected) return got;
    await sleep(100);
  }
  return got;
}

/** Publishes RATE stamped events/s round-robin over the sessions until `stopAt` (monotonic ms); counts those stamped in the window. */
async function produce(publisher: RedisEventPublisher, sessionIds: string[], window: { from: number; to: number }, stopAt: number): Promise<{ published: number; inWindow: number; failed: number }> {
  const started = monotonicMs();
  let published = 0;
  let inWindow = 0;
  let failed = 0;
  for (let now = started; now < stopAt; now = monotonicMs()) {
    const due = Math.floor(((now - started) * RATE) / 1000);
    for (; published < due; published += 1) {
      const stamp = monotonicMs();
      if (stamp >= window.from && stamp < window.to) inWindow += 1;
      const sessionId = sessionIds[published % sessionIds.length]!;
      publisher.publish(sessionId, 1, { type: 'stream_delta', streamId: 'bench', text: stamp.toFixed(3) }).catch(() => void (failed += 1));
    }
    await sleep(TICK_MS);
  }
  await publisher.flush();
  return { published, inWindow, failed };
}

async function main(): Promise<void> {
  const stop = deadline(300_000, 'gateway-sse bench');
  if (FROM === 'dist') await buildDist();
  const db = await createBenchDatabase('sse');
  const queueName = uniqueName('sse');
  const redis = new Redis(REDIS_URL);
  const sessionIds = Array.from({ length: SESSIONS }, (_, i) => `sse-${i}`);
  const queue = new SessionQueue({ databaseUrl: db.url, redisUrl: REDIS_URL, queueName });
  const followers: FollowerProcess[] = [];
  let gateway: CliGateway | undefined;
  const publisher = new RedisEventPublisher(publisherConnection(redis), { queueName, ownsConnection: true, onError: () => undefined });
  try {
    await pool(sessionIds, 20, async (id) => void (await queue.sessions.create({ id })));
    const secret = randomBytes(32).toString('hex');
    const token = await new SignJWT({ tenant: 'default', scope: 'read' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(secret));
    gateway = spawnCliGateway(
      {
        DATABASE_URL: db.url,
        REDIS_URL,
        LOOPFLEET_QUEUE: queueName,
        GATEWAY_AUTH: 'jwt',
        GATEWAY_JWT_SECRET: secret,
        // Every follower connects with the one token: the per-principal limit would refuse most of them.
        GATEWAY_RATE_LIMIT: '10000000',
        LOG_LEVEL: 'warn',
      },
      await freePort(),
      FROM,
    );
    await gateway.ready;
    const idle = processMemoryMb(gateway.pid);

    const generators = await Promise.all(Array.from({ length: GENERATORS }, (_, i) => startFollowerProcess(`sse generator ${i}`)));
    const raw = await startFollowerProcess('raw XREAD followers');
    followers.push(...generators, raw);
    // Follower k of each session goes to generator k % GENERATORS, so every generator follows every session.
    const assignments = generators.map((_, g) => Array.from({ length: PER_SESSION }, (__, k) => k).filter((k) => k % GENERATORS === g).flatMap(() => sessionIds));
    const connectStarted = performance.now();
    const opened = await Promise.all(generators.map((generator, g) => generator.open({ type: 'sse', url: gateway!.url, token, sessionIds: assignments[g]!, concurrency: CONNECT_CONCURRENCY })));
    const connectMs = Math.round(performance.now() - connectStarted);
    const rawKeys = Array.from({ length: RAW_PER_SESSION }, () => sessionIds.map((id) => eventStreamKey(queueName, id))).flat();
    await raw.open({ type: 'xread', redisUrl: REDIS_URL, streamKeys: rawKeys, concurrency: CONNECT_CONCURRENCY });
    const connected = processMemoryMb(gateway.pid);

    const start = monotonicMs();
    const window = { from: start + WARMUP_S * 1000, to: start + (WARMUP_S + SECONDS) * 1000 };
    await Promise.all(followers.map((follower) => follower.window(window.from, window.to)));
    let peakRssMb = 0;
    const pids: Record<string, number> = Object.assign({ gateway: gateway.pid, rawFollowers: raw.pid }, ...generators.map((generator, g) => ({ [`generator${g}`]: generator.pid })));
    let cpuBefore: { gateway: number | null; others: ReturnType<typeof cpuSnapshot> } | undefined;
    let cpuAfter: typeof cpuBefore;
    const sampler = setInterval(() => {
      const now = monotonicMs();
      peakRssMb = Math.max(peakRssMb, processMemoryMb(gateway!.pid)?.rssMb ?? 0);
      if (cpuBefore === undefined && now >= window.from) cpuBefore = { gateway: statCpuMs(gateway!.pid), others: cpuSnapshot(pids) };
      if (cpuAfter === undefined && now >= window.to) cpuAfter = { gateway: statCpuMs(gateway!.pid), others: cpuSnapshot(pids) };
    }, 20);
    const produced = await produce(publisher, sessionIds, window, window.to + 200);
    clearInterval(sampler);
    const expectedGateway = produced.inWindow * PER_SESSION;
    const expectedRaw = produced.inWindow * RAW_PER_SESSION;
    const [gotGateway, gotRaw] = await Promise.all([drain(generators, expectedGateway), drain([raw], expectedRaw)]);
    const reports = await Promise.all(generators.map((generator) => generator.report()));
    const rawReport = await raw.report();
    const finalMemory = processMemoryMb(gateway.pid);
    stop();

    const gatewayCpuMs = cpuBefore?.gateway != null && cpuAfter?.gateway != null ? cpuAfter.gateway - cpuBefore.gateway : null;
    const redisCpuMs = cpuBefore?.others.redis != null && cpuAfter?.others.redis != null ? cpuAfter.others.redis - cpuBefore.others.redis : null;
    const machineCpuMs = cpuBefore?.others.machine != null && cpuAfter?.others.machine != null ? cpuAfter.others.machine - cpuBefore.others.machine : null;
    const gatewayDelays = delayFigures(reports, expectedGateway);
    const rawDelays = delayFigures([rawReport], expectedRaw);
    const delivered = gatewayDelays.timed;
    const gatewayCpuPerEvent = gatewayCpuMs === null || delivered === 0 ? null : round(gatewayCpuMs / delivered, 4);
    const lost = { gateway: expectedGateway - gotGateway, raw: expectedRaw - gotRaw, publishFailed: produced.failed };
    const ended = reports.reduce((sum, entry) => sum + entry.ended, 0) + rawReport.ended;
    const gaps = reports.reduce((sum, entry) => sum + entry.gaps, 0) + rawReport.gaps;
    await report({
      name: 'gateway-sse',
      command: 'node --max-semi-space-size=32 --import tsx bench/gateway-sse.bench.ts',
      runs: 1,
      sizes: {
        followers: FOLLOWERS,
        sessions: SESSIONS,
        followersPerSession: PER_SESSION,
        generators: GENERATORS,
        rawFollowers: SESSIONS * RAW_PER_SESSION,
        ratePerSecond: RATE,
        warmupSeconds: WARMUP_S,
        seconds: SECONDS,
        gateway: `${GATEWAY_PROCESS[FROM]}, GATEWAY_AUTH=jwt`,
        event: 'stream_delta through RedisEventPublisher.publish (no coalescing), stamped with CLOCK_MONOTONIC',
      },
      figures: {
        // Other work on the machine shows here first: the run's own processes take a core or less.
        loadAverageAtEnd: loadavg().map((value) => round(value, 2)),
        connectMs,
        opened: opened.map((entry) => entry.open),
        published: produced.published,
        publishedInWindow: produced.inWindow,
        deliveredInWindow: delivered,
        deliveredPerSecond: Math.round(delivered / SECONDS),
        gateway: {
          cpuMsInWindow: gatewayCpuMs,
          cpuMsPerDeliveredEvent: gatewayCpuPerEvent,
          cpuPctOfOneCore: gatewayCpuMs === null ? null : round((gatewayCpuMs / (SECONDS * 1000)) * 100, 1),
          idleRssMb: idle === null ? null : round(idle.rssMb, 1),
          connectedRssMb: connected === null ? null : round(connected.rssMb, 1),
          peakRssMbSampled: round(peakRssMb, 1),
          peakRssMbVmHWM: finalMemory === null ? null : round(finalMemory.peakRssMb, 1),
          rssKbPerFollower: idle === null || connected === null ? null : round(((connected.rssMb - idle.rssMb) * 1024) / FOLLOWERS, 1),
        },
        delay: { gatewaySse: gatewayDelays, rawXread: rawDelays },
        redisCpuMsPerPublishedEvent: redisCpuMs === null ? null : round(redisCpuMs / produced.inWindow, 4),
        machineCpuPctOfTwoCores: machineCpuMs === null ? null : round((machineCpuMs / (SECONDS * 1000 * 2)) * 100, 1),
        // Where the machine's CPU went in the window, % of one core by process (`node`: this process, the producer).
        cpuPctOfOneCoreByProcess: cpuBefore === undefined || cpuAfter === undefined ? null : cpuPerItem(cpuBefore.others, cpuAfter.others, SECONDS * 10),
        lost,
        followersEnded: ended,
        gaps,
      },
      ratio: {
        p50GatewayVsRaw: round(gatewayDelays.p50Ms / rawDelays.p50Ms, 2),
        p99GatewayVsRaw: round(gatewayDelays.p99Ms / rawDelays.p99Ms, 2),
      },
      targets: [
        { target: `${FOLLOWERS} SSE followers over ${SESSIONS} sessions held on one gateway process`, value: opened.reduce((sum, entry) => sum + entry.open, 0), met: opened.reduce((sum, entry) => sum + entry.open, 0) === FOLLOWERS && ended === 0 },
        { target: 'every event of the window reaches every follower (gateway and raw)', value: `${gotGateway}/${expectedGateway}, ${gotRaw}/${expectedRaw}`, met: lost.gateway === 0 && lost.raw === 0 && produced.failed === 0 },
      ],
    });
  } finally {
    await Promise.all(followers.map((follower) => follower.close()));
    await gateway?.stop();
    await publisher.close();
    await queue.close();
    const cleaner = new Redis(REDIS_URL);
    await deleteQueueKeys(cleaner, queueName);
    await cleaner.quit();
    redis.disconnect();
    await db.drop();
    await cleanupAll();
  }
}

await main();
