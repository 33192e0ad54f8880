/**
 * 2,000 standard inputs in flight in one worker process, with a slow model: CPU and RSS of the worker.
 *
 * The worker is `loopfleet worker` as deployed: its own process, compiled (`dist/`, built first — no
 * TypeScript loader in it), `LLM_PROVIDER=openai` through the real SDK and its `node:http` client to the
 * bench's fake OpenAI server, itself in a process of its own, answering each call after 1 s
 * (2 calls per input, 2,000 sessions, `WORKER_CONCURRENCY=2000`). The fake model holds every first
 * call until all 2,000 have arrived, then gives each its 1 s: the "held" window runs from the 2,000th
 * arrival to the first answer, ≥ 1 s in which all 2,000 calls are open at once and the worker does only
 * what holding them costs. The server reads the worker's CPU at both ends of it (`/proc`, its threads'
 * schedstat: nanoseconds).
 * Also: the most calls the server had open at once, the worker's peak RSS (`VmHWM`), its RSS and CPU
 * sampled every 250 ms, its CPU per input over the run; the floor is the same worker idle, started,
 * before any input exists.
 *
 * Two runs: the worker's default heap growth (`WORKER_HEAP_GROWTH_PERCENT=100`), which the targets
 * read, and V8's own (`0`), for comparison (docs/fleet.md, "Memory").
 *
 * Run alone: `npx tsx bench/concurrency.bench.ts` (BENCH_INFLIGHT, default 2000).
 */
import pg from 'pg';
import { Redis } from 'ioredis';
import { SessionQueue } from '../src/producer/session-queue.js';
import { BENCH_TOOLS_MODULE, buildDist, processMemoryMb, spawnCliWorker, type CliWorker } from './lib/cli-worker.js';
import { cleanupAll, createBenchDatabase, deleteQueueKeys, REDIS_URL, uniqueName, type BenchDatabase } from './lib/fleet.js';
import { startStandardOpenAiServerProcess } from './lib/openai-fake-process.js';
import { processCpuMs } from './lib/process-cpu.js';
import { deadline, pool, report, round, sleep } from './lib/stats.js';

const INFLIGHT = Number(process.env.BENCH_INFLIGHT ?? 2000);
const LLM_DELAY_MS = 1000;

interface Sample {
  s: number;
  rssMb: number;
  cpuPct: number;
}

interface RunResult {
  heapGrowthPercent: number;
  completedInTime: boolean;
  finished: number;
  statuses: Record<string, number>;
  peakLlmCallsInFlight: number;
  heldWindowMs: number | null;
  /** The worker's CPU in the held window, in ms (its threads' schedstat, nanoseconds). */
  heldCpuMs: number | null;
  heldCpuPctOfOneCore: number | null;
  runCpuPctOfOneCore: number;
  cpuMsPerInput: number;
  peakRssMb: number;
  wallMs: number;
  llmRequests: number;
  idle: { cpuPct: number; rssMb: number };
  timeline: Sample[];
}

/** The inputs of one run's sessions (`<prefix>…`) by status. */
async function statusCounts(client: pg.Client, prefix: string): Promise<Record<string, number>> {
  const { rows } = await client.query<{ status: string; c: string }>('SELECT status, count(*) AS c FROM session_inputs WHERE starts_with(session_id, $1) GROUP BY status', [prefix]);
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.c)]));
}

const ended = (counts: Record<string, number>) => (counts['done'] ?? 0) + (counts['failed'] ?? 0) + (counts['cancelled'] ?? 0);

async function run(db: BenchDatabase, client: pg.Client, heapGrowthPercent: number): Promise<RunResult> {
  const queueName = uniqueName('conc');
  const prefix = `c${heapGrowthPercent}-`;
  const fake = await startStandardOpenAiServerProcess({ delayMs: LLM_DELAY_MS, holdFirstCalls: INFLIGHT, holdTimeoutMs: 90_000 });
  const producer = new SessionQueue({ databaseUrl: db.url, redisUrl: REDIS_URL, queueName });
  let worker: CliWorker | null = null;
  try {
    worker = spawnCliWorker(
      {
        DATABASE_URL: db.url,
        REDIS_URL,
        LOOPFLEET_QUEUE: queueName,
        WORKER_CONCURRENCY: String(INFLIGHT),
        WORKER_HEAP_GROWTH_PERCENT: String(heapGrowthPercent),
        LLM_PROVIDER: 'openai',
        OPENAI_API_KEY: 'sk-bench',
        OPENAI_BASE_URL: fake.url,
        LLM_MODEL: 'gpt-bench',
        LOOPFLEET_TOOLS: BENCH_TOOLS_MODULE,
        LOG_LEVEL: 'info',
        METRICS_PORT: '0',
      },
      'dist',
    );
    const { pid } = worker;
    await worker.ready;
    await fake.watch(pid);
    // Floor: the started worker, idle (no input exists yet).
    await sleep(500);
    const idleCpu0 = processCpuMs(pid)!;
    const idleT0 = performance.now();
    await sleep(2000);
    const idle = {
      cpuPct: round(((processCpuMs(pid)! - idleCpu0) / (performance.now() - idleT0)) * 100, 1),
      rssMb: round(processMemoryMb(pid)!.rssMb, 0),
    };

    const timeline: Sample[] = [];
    const cpu0 = processCpuMs(pid)!;
    const t0 = performance.now();
    let last = { t: t0, cpu: cpu0 };
    const sampler = setInterval(() => {
      const now = performance.now();
      const cpu = processCpuMs(pid);
      const memory = processMemoryMb(pid);
      if (cpu === null || memory === null) return;
      timeline.push({ s: round((now - t0) / 1000, 2), rssMb: round(memory.rssMb, 0), cpuPct: round(((cpu - last.cpu) / (now - last.t)) * 100, 0) });
      last = { t: now, cpu };
    }, 250);
    // The inputs go in while the worker runs: each drain starts its first call as its kick arrives,
    // and the fake model holds them all until the last one is there.
    await pool(Array.from({ length: INFLIGHT }, (_, i) => i), 64, async (i) => {
      await producer.add('send', { sessionId: `${prefix}${i}`, input: `concurrent input ${i}` });
    });
    const limit = performance.now() + 150_000;
    let statuses = await statusCounts(client, prefix);
    while (ended(statuses) < INFLIGHT && performance.now() < limit) {
      await sleep(100);
      statuses = await statusCounts(client, prefix);
    }
    const finished = ended(statuses);
    const wallMs = performance.now() - t0;
    clearInterval(sampler);
    const cpuRun = processCpuMs(pid)! - cpu0;
    const memory = processMemoryMb(pid)!;
    const held = await fake.held();
    const heldMs = held.from !== null && held.to !== null ? held.to.t - held.from.t : null;
    const heldCpuMs = held.from?.cpuMs != null && held.to?.cpuMs != null ? held.to.cpuMs - held.from.cpuMs : null;
    const heldCpu = heldCpuMs !== null && heldMs !== null && heldMs > 0 ? (heldCpuMs / heldMs) * 100 : null;
    return {
      heapGrowthPercent,
      completedInTime: finished >= INFLIGHT,
      finished,
      statuses,
      peakLlmCallsInFlight: await fake.peakInFlight(),
      heldWindowMs: heldMs === null ? null : round(heldMs, 0),
      heldCpuMs: heldCpuMs === null ? null : round(heldCpuMs, 1),
      heldCpuPctOfOneCore: heldCpu === null ? null : round(heldCpu, 1),
      runCpuPctOfOneCore: round((cpuRun / wallMs) * 100, 1),
      cpuMsPerInput: round(cpuRun / Math.max(1, finished), 2),
      peakRssMb: round(memory.peakRssMb, 0),
      wallMs: round(wallMs, 0),
      llmRequests: await fake.requests(),
      idle,
      // Every second sample: the shape of the run, not every reading.
      timeline: timeline.filter((_, i) => i % 2 === 0),
    };
  } finally {
    await worker?.stop();
    await producer.close();
    await fake.close();
    const redis = new Redis(REDIS_URL);
    await deleteQueueKeys(redis, queueName);
    await redis.quit();
  }
}

async function main(): Promise<void> {
  const stop = deadline(300_000, 'concurrency bench');
  await buildDist();
  const db = await createBenchDatabase('conc');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const runs: RunResult[] = [];
    for (const percent of [100, 0]) runs.push(await run(db, client, percent));
    stop();
    const byDefault = runs[0]!;
    const v8Default = runs[1]!;
    await report({
      name: 'concurrency',
      command: 'npx tsx bench/concurrency.bench.ts',
      runs: runs.length,
      sizes: {
        inputs: INFLIGHT,
        sessions: INFLIGHT,
        workerConcurrency: INFLIGHT,
        llmDelayMs: LLM_DELAY_MS,
        llmCallsPerInput: 2,
        worker: 'loopfleet worker process, compiled (dist/)',
        llm: 'openai SDK (LLM_HTTP_CLIENT=node) → fake OpenAI server in its own process',
      },
      figures: {
        ...Object.fromEntries(Object.entries(byDefault).filter(([key]) => key !== 'idle')),
        v8DefaultHeapGrowth: v8Default,
      },
      floor: { idleWorkerCpuPct: byDefault.idle.cpuPct, idleRssMb: byDefault.idle.rssMb },
      ratio: { peakRssVsIdle: round(byDefault.peakRssMb / byDefault.idle.rssMb, 2), peakRssVsV8DefaultHeapGrowth: round(byDefault.peakRssMb / v8Default.peakRssMb, 2) },
      targets: [
        { target: `${INFLIGHT} inputs in flight held (most LLM calls open at once, at the server)`, value: byDefault.peakLlmCallsInFlight, met: byDefault.peakLlmCallsInFlight >= INFLIGHT },
        { target: 'CPU < 50% of one core while they are all in flight', value: byDefault.heldCpuPctOfOneCore, met: byDefault.heldCpuPctOfOneCore !== null && byDefault.peakLlmCallsInFlight >= INFLIGHT && byDefault.heldCpuPctOfOneCore < 50 },
        { target: 'RSS < 400 MB (the worker process, peak)', value: byDefault.peakRssMb, met: byDefault.peakRssMb < 400 },
        { target: 'every input completes (done)', value: byDefault.statuses['done'] ?? 0, met: (byDefault.statuses['done'] ?? 0) === INFLIGHT },
      ],
    });
  } finally {
    await client.end();
    await db.drop();
    await cleanupAll();
  }
}

await main();
