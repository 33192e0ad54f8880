/**
 * 2,000 standard inputs in flight in one worker process, each LLM call taking 1 s (scripted provider,
 * `delayMs: 1000`, 2 calls per input): CPU and RSS of the process.
 * The 2,000 inputs (2,000 sessions) are accepted first; then a worker with concurrency 2,000 starts
 * (WORKER_CONCURRENCY is validated up to 1,000, so the resolved config is set directly).
 * Starting 2,000 inputs takes longer than one model second on two cores, so without help the first
 * calls return while the last inputs are still starting and no moment has all 2,000 merely waiting.
 * The model's first call therefore starts its 1 s once all 2,000 first calls have arrived: the
 * "held" window runs from the 2,000th arrival to the first answer, ≥ 1 s in which all 2,000 are in
 * flight and the process does only what holding them costs (plus the tail of the last start-ups).
 * CPU is read at both ends of that window. Sampled every 250 ms too: RSS, CPU, LLM calls in flight.
 * The floor is the same process idle with a started worker (CPU and RSS before the inputs are released).
 *
 * Run alone: `npx tsx bench/concurrency.bench.ts` (BENCH_INFLIGHT, default 2000).
 */
import { SessionQueue } from '../src/producer/session-queue.js';
import type { LlmCallOptions, LlmRequest, LlmResponse } from '../src/core/ports/llm.js';
import { afterTool, benchConfig, closeFleetBench, createBenchDatabase, deleteQueueKeys, FinishCounter, REDIS_URL, StandardScriptedLlm, startBenchWorker, uniqueName } from './lib/fleet.js';
import { cpuMs, deadline, pool, report, round, sleep } from './lib/stats.js';
import { Redis } from 'ioredis';

const INFLIGHT = Number(process.env.BENCH_INFLIGHT ?? 2000);
const LLM_DELAY_MS = 1000;

interface Mark {
  t: number;
  cpu: number;
}

const mark = (): Mark => ({ t: performance.now(), cpu: cpuMs() });

/**
 * Counts calls in flight, and holds every first call until `expected` first calls have arrived (or
 * `gateTimeoutMs` passed, so a run that cannot start them all still ends); then each takes its 1 s.
 * Marks the window between the last arrival and the first answer.
 */
class GatedLlm extends StandardScriptedLlm {
  inFlight = 0;
  firstCalls = 0;
  heldFrom: Mark | null = null;
  heldTo: Mark | null = null;
  readonly #expected: number;
  readonly #gate: Promise<void>;
  #open: () => void = () => undefined;

  constructor(expected: number, gateTimeoutMs: number) {
    super({ delayMs: LLM_DELAY_MS });
    this.#expected = expected;
    this.#gate = new Promise<void>((resolve) => {
      this.#open = resolve;
    });
    setTimeout(() => this.#open(), gateTimeoutMs).unref();
  }

  override async complete(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    this.inFlight += 1;
    try {
      if (!afterTool(request.messages)) {
        this.firstCalls += 1;
        if (this.firstCalls === this.#expected) {
          this.heldFrom = mark();
          this.#open();
        }
        await this.#gate;
      }
      const response = await super.complete(request, options);
      this.heldTo ??= mark();
      return response;
    } finally {
      this.inFlight -= 1;
    }
  }
}

async function main(): Promise<void> {
  const stop = deadline(240_000, 'concurrency bench');
  const db = await createBenchDatabase('conc');
  const queueName = uniqueName('conc');
  const redis = new Redis(REDIS_URL);
  const producer = new SessionQueue({ databaseUrl: db.url, redisUrl: REDIS_URL, queueName });
  const counter = new FinishCounter();
  const base = benchConfig({ DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName, WORKER_CONCURRENCY: '1000' });
  // WORKER_CONCURRENCY is validated up to 1000; the bench sets the resolved value directly.
  const config = { ...base, worker: { ...base.worker, concurrency: INFLIGHT } };
  const llm = new GatedLlm(INFLIGHT, 60_000);
  let worker: Awaited<ReturnType<typeof startBenchWorker>> | null = null;
  try {
    // Floor: the process with a started, idle worker — before any input exists (its sweeper would
    // otherwise find the inbox and drain it).
    const idleQueue = uniqueName('idle');
    const idleWorker = await startBenchWorker({ ...config, queueName: idleQueue }, { llm: new StandardScriptedLlm() });
    await sleep(500);
    const idleCpu0 = cpuMs();
    const idleT0 = performance.now();
    await sleep(2000);
    const idleCpuPct = ((cpuMs() - idleCpu0) / (performance.now() - idleT0)) * 100;
    const idleRssMb = process.memoryUsage().rss / 2 ** 20;
    await idleWorker.close({ graceMs: 1000 });
    await deleteQueueKeys(redis, idleQueue);
    await pool(Array.from({ length: INFLIGHT }, (_, i) => i), 64, async (i) => {
      await producer.add('send', { sessionId: `c-${i}`, input: `concurrent input ${i}` });
    });

    const samples: { t: number; cpuPct: number; rssMb: number; inFlight: number }[] = [];
    let lastCpu = cpuMs();
    let lastT = performance.now();
    const sampler = setInterval(() => {
      const now = performance.now();
      const cpu = cpuMs();
      samples.push({ t: now, cpuPct: ((cpu - lastCpu) / (now - lastT)) * 100, rssMb: process.memoryUsage().rss / 2 ** 20, inFlight: llm.inFlight });
      lastCpu = cpu;
      lastT = now;
    }, 250);
    const cpu0 = cpuMs();
    const t0 = performance.now();
    worker = await startBenchWorker(config, { wrapStore: counter.wrapStore, llm });
    // Bounded: a run that does not finish in time is reported with what finished.
    const completedInTime = await counter.waitFor(INFLIGHT, 150_000).then(
      () => true,
      () => false,
    );
    const wallMs = performance.now() - t0;
    const runCpuPct = ((cpuMs() - cpu0) / wallMs) * 100;
    clearInterval(sampler);
    const peak = Math.max(...samples.map((s) => s.inFlight));
    const { heldFrom, heldTo } = llm;
    const heldMs = heldFrom && heldTo ? heldTo.t - heldFrom.t : 0;
    const heldCpuPct = heldFrom && heldTo && heldMs > 0 ? ((heldTo.cpu - heldFrom.cpu) / heldMs) * 100 : Number.NaN;
    const allHeld = heldFrom !== null && peak >= INFLIGHT;
    const peakRss = Math.max(...samples.map((s) => s.rssMb));
    stop();
    await report({
      name: 'concurrency',
      command: 'npx tsx bench/concurrency.bench.ts',
      runs: 1,
      sizes: { inputs: INFLIGHT, sessions: INFLIGHT, workerConcurrency: INFLIGHT, llmDelayMs: LLM_DELAY_MS, llmCallsPerInput: 2 },
      figures: {
        completedInTime,
        finishedCount: counter.finished,
        peakLlmCallsInFlight: peak,
        heldWindowMs: round(heldMs, 0),
        heldCpuPctOfOneCore: round(heldCpuPct, 1),
        runCpuPctOfOneCore: round(runCpuPct, 1),
        peakRssMb: round(peakRss, 0),
        wallMs: round(wallMs, 0),
        cpuMsPerInput: round((cpuMs() - cpu0) / Math.max(1, counter.finished), 2),
        finished: counter.byStatus,
        errors: counter.errors,
        timeline: samples.filter((_, i) => i % 8 === 0).map((s) => ({ s: round((s.t - t0) / 1000, 1), inFlight: s.inFlight, cpuPct: round(s.cpuPct, 0), rssMb: round(s.rssMb, 0) })),
      },
      floor: { idleWorkerCpuPct: round(idleCpuPct, 1), idleRssMb: round(idleRssMb, 0) },
      ratio: { peakRssVsIdle: round(peakRss / idleRssMb, 2) },
      targets: [
        { target: `${INFLIGHT} inputs in flight held (peak LLM calls in flight)`, value: peak, met: peak >= INFLIGHT },
        { target: 'CPU < 50% of one core while they are all in flight', value: round(heldCpuPct, 1), met: allHeld && heldCpuPct < 50 },
        { target: 'RSS < 400 MB', value: round(peakRss, 0), met: peakRss < 400 },
        { target: 'every input completes (done)', value: counter.byStatus['done'] ?? 0, met: (counter.byStatus['done'] ?? 0) === INFLIGHT },
      ],
    });
  } finally {
    await closeFleetBench({ worker, producer, redis, queueName, db }, { force: true });
  }
}

await main();
