/**
 * What tracing costs per input (docs/tracing.md): the standard input (user text → LLM call returning
 * one `noop` tool call → tool → LLM call streaming 10 deltas) through one in-process worker, with the
 * producer in its own process, in two workloads run in rotated rounds on the same database:
 * - `off`: no `OTEL_TRACES_EXPORTER`, so the loop's tracer is the no-op one and no SDK is loaded
 *   (this process loads it for `on` anyway, which `off` does not use);
 * - `on`: the OpenTelemetry SDK with a batch processor into an in-memory exporter, BullMQ's telemetry
 *   on the worker's queue and worker: every span of the input, round, model call and tool call is
 *   recorded and exported (nothing leaves the process, so the figure is the worker's own cost).
 * Reports inputs/s of each, their ratio, this process's CPU per input, and the spans per input.
 *
 * Run alone: `npx tsx bench/tracing.bench.ts` (BENCH_INPUTS per run, default 1000; BENCH_RUNS, default 5).
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { Redis } from 'ioredis';
import { startTracing, type Tracing } from '../src/observability/tracing/start-tracing.js';
import { benchConfig, cleanupAll, createBenchDatabase, deleteQueueKeys, FinishCounter, REDIS_URL, StandardScriptedLlm, startBenchWorker, uniqueName } from './lib/fleet.js';
import { startProducerProcess } from './lib/producer-process.js';
import { standardRun } from './lib/standard-run.js';
import { cpuMs, deadline, median, report, round } from './lib/stats.js';

const N = Number(process.env.BENCH_INPUTS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const SESSIONS = 200;
const CONCURRENCY = 128;
const PRODUCER_CONCURRENCY = 64;
type Workload = 'off' | 'on';

async function main(): Promise<void> {
  const stop = deadline(300_000, 'tracing bench');
  const db = await createBenchDatabase('tracing');
  const queueName = uniqueName('tracing');
  const redis = new Redis(REDIS_URL);
  const producerProcess = await startProducerProcess();
  const producer = producerProcess.sessionQueue({ databaseUrl: db.url, redisUrl: REDIS_URL, queueName });
  const config = benchConfig({ DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName, WORKER_CONCURRENCY: String(CONCURRENCY) });
  const times: Record<Workload, number[]> = { off: [], on: [] };
  const cpuPerInput: Record<Workload, number[]> = { off: [], on: [] };
  const spansPerInput: number[] = [];
  const notDone: Record<Workload, number> = { off: 0, on: 0 };
  try {
    const fleetRun = async (workload: Workload, run: number, measure: boolean) => {
      const exporter = new InMemorySpanExporter();
      const tracing: Tracing | undefined = workload === 'on' ? await startTracing({}, { serviceName: 'bench', exporter }) : undefined;
      const counter = new FinishCounter();
      const worker = await startBenchWorker(config, Object.assign({ wrapStore: counter.wrapStore, llm: new StandardScriptedLlm() }, tracing !== undefined ? { tracing } : {}));
      const cpuBefore = cpuMs();
      const result = await standardRun({ producer, counter, n: N, sessions: SESSIONS, producerConcurrency: PRODUCER_CONCURRENCY, prefix: `${workload}-${run}`, timeoutMs: 90_000 });
      const cpu = cpuMs() - cpuBefore;
      await worker.close({ graceMs: 5_000 });
      if (tracing !== undefined) {
        await tracing.flush();
        if (measure) spansPerInput.push(exporter.getFinishedSpans().length / N);
        await tracing.shutdown();
      }
      notDone[workload] += N - (result.finished['done'] ?? 0);
      if (!measure) return;
      times[workload].push(result.ms);
      cpuPerInput[workload].push(cpu / N);
    };
    for (let run = -1; run < RUNS; run += 1) {
      const order: Workload[] = run % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
      for (const workload of order) await fleetRun(workload, run, run >= 0);
    }
    const rate = (ms: number[]) => round(N / (median(ms) / 1000), 0);
    const off = rate(times.off);
    const on = rate(times.on);
    stop();
    await report({
      name: 'tracing',
      command: 'npx tsx bench/tracing.bench.ts',
      runs: RUNS,
      sizes: { inputsPerRun: N, warmupRounds: 1, sessions: SESSIONS, workerConcurrency: CONCURRENCY, producerConcurrency: PRODUCER_CONCURRENCY },
      figures: {
        offInputsPerSec: off,
        onInputsPerSec: on,
        runsMs: { off: times.off.map((ms) => round(ms, 0)), on: times.on.map((ms) => round(ms, 0)) },
        workerCpuMsPerInput: { off: round(median(cpuPerInput.off), 3), on: round(median(cpuPerInput.on), 3) },
        spansPerInput: round(median(spansPerInput), 2),
        notCompleted: notDone,
      },
      ratio: { onVsOff: round(on / off, 3) },
      targets: [{ target: 'throughput with tracing on (in-memory exporter) within 10% of off (same run)', value: round(on / off, 3), met: on / off >= 0.9 }],
    });
  } finally {
    await producerProcess.close();
    await deleteQueueKeys(redis, queueName);
    await redis.quit();
    await db.drop();
    await cleanupAll();
  }
}

await main();
