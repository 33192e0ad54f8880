/**
 * Redis Cluster against a single node, in one run (issue 39): the standard input (tool round, 10-delta
 * answer; scripted model) through one in-process worker (concurrency 128) and a producer process (64
 * adds in flight), 200 sessions, `BENCH_INPUTS` inputs a run, in two modes with the same settings:
 * - `single`: the machine's Redis at 127.0.0.1:6379 (`REDIS_URL`), one dispatch queue;
 * - `cluster`: a 3-primary / 3-replica Redis Cluster started here (`test/support/redis-cluster.ts`),
 *   `REDIS_CLUSTER_NODES` and `LOOPFLEET_QUEUE_SHARDS=3` for the worker and the producer.
 * One warm-up round of both, then `BENCH_RUNS` rounds, the order alternating; medians.
 *
 * Per run: inputs/s at saturation; CPU per input of the machine and of the fleet's own processes (this
 * process — the worker —, the producer process, the Postgres backends of the bench's database, and
 * the mode's `redis-server`s read by pid: the cluster's six, replicas included, or the single node),
 * so other work on the machine does not count in `fleet`; `INFO commandstats` of every node before
 * and after, per input (calls made inside scripts included; the clients' slot-map refreshes and the
 * bench's own INFO reported apart as housekeeping). One second before each run, the machine and the
 * mode's Redis are read idle: the background the other work on the machine adds.
 *
 * Run: `node --max-semi-space-size=32 --import tsx bench/cluster.bench.ts` or `npm run bench:cluster`
 * (needs redis-server and redis-cli on PATH). Informational on one 2-core machine: the target is the
 * overhead of cluster mode per input, ≤ 15 %.
 */
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { REDIS_CLUSTER_MISSING, redisClusterAvailable, startRedisCluster, type RunningRedisCluster } from '../test/support/redis-cluster.js';
import { benchConfig, cleanupAll, countRedisCommands, createBenchDatabase, deleteQueueKeys, diffCounts, FinishCounter, REDIS_URL, StandardScriptedLlm, startBenchWorker, uniqueName } from './lib/fleet.js';
import { cpuSnapshot } from './lib/process-cpu.js';
import { startProducerProcess, type SessionQueueTarget } from './lib/producer-process.js';
import { cpuByPid, cpuDelta, openRedisNode, postgresBackendPids, statsOf, workCalls, type RedisNode } from './lib/redis-nodes.js';
import { standardRun } from './lib/standard-run.js';
import { deadline, report, round, sleep } from './lib/stats.js';
import { capacityModel, summarise, type RunFigures } from './lib/cluster-figures.js';

const N = Number(process.env.BENCH_INPUTS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 4);
const SESSIONS = 200;
const CONCURRENCY = 128;
const PRODUCER_CONCURRENCY = 64;
const SHARDS = 3;
const IDLE_WINDOW_MS = 1000;
const MODES = ['single', 'cluster'] as const;
type Mode = (typeof MODES)[number];
const COMMAND = 'node --max-semi-space-size=32 --import tsx bench/cluster.bench.ts';

/** Everything a run reads at one moment. */
interface Sample {
  at: number;
  machine: number | null;
  worker: number;
  producer: number | null;
  redis: Map<number, number>;
  postgres: Map<number, number>;
  stats: Record<string, Record<string, number>>;
}

async function main(): Promise<void> {
  if (!redisClusterAvailable()) throw new Error(`cluster bench: ${REDIS_CLUSTER_MISSING}`);
  const stop = deadline(900_000, 'cluster bench');
  const loadBefore = loadavg().map((value) => round(value, 2));
  let cluster: RunningRedisCluster | null = null;
  const nodes: Record<Mode, RedisNode[]> = { single: [], cluster: [] };
  const db = await createBenchDatabase('cluster');
  const producerProcess = await startProducerProcess();
  const single = new Redis(REDIS_URL);
  const runs: Record<Mode, RunFigures[]> = { single: [], cluster: [] };
  try {
    cluster = await startRedisCluster();
    const url = new URL(REDIS_URL);
    nodes.single.push(openRedisNode('single', 'single', url.hostname, Number(url.port || 6379)));
    const primaries = await cluster.primaries();
    primaries.sort((a, b) => a.slots[0]![0] - b.slots[0]![0]);
    primaries.forEach((p, i) => nodes.cluster.push(openRedisNode(`primary${i}`, 'primary', p.host, p.port)));
    const primaryPorts = new Set(primaries.map((p) => p.port));
    cluster.nodes.filter((n) => !primaryPorts.has(n.port)).forEach((n, i) => nodes.cluster.push(openRedisNode(`replica${i}`, 'replica', n.host, n.port)));
    for (const node of [...nodes.single, ...nodes.cluster]) if (node.pid === null) console.error(`cluster bench: no pid found for redis-server :${node.port}; its CPU is not counted`);

    const sample = async (mode: Mode): Promise<Sample> => {
      const snapshot = cpuSnapshot({ producer: producerProcess.pid });
      return {
        at: performance.now(),
        machine: snapshot.machine,
        worker: snapshot.node,
        producer: snapshot.processes['producer'] ?? null,
        redis: cpuByPid(nodes[mode].flatMap((node) => (node.pid === null ? [] : [node.pid]))),
        postgres: cpuByPid(postgresBackendPids(db.name)),
        stats: await statsOf(nodes[mode]),
      };
    };

    const run = async (mode: Mode, index: number, measure: boolean): Promise<void> => {
      const queueName = uniqueName(`cl_${mode}`);
      const clusterEnv: Record<string, string> = mode === 'cluster' ? { REDIS_CLUSTER_NODES: cluster!.nodesEnv, LOOPFLEET_QUEUE_SHARDS: String(SHARDS) } : {};
      const config = benchConfig({ DATABASE_URL: db.url, LOOPFLEET_QUEUE: queueName, WORKER_CONCURRENCY: String(CONCURRENCY), ...clusterEnv });
      const counter = new FinishCounter();
      const worker = await startBenchWorker(config, { wrapStore: counter.wrapStore, llm: new StandardScriptedLlm() });
      const target: SessionQueueTarget = mode === 'cluster'
        ? { databaseUrl: db.url, redisUrl: REDIS_URL, queueName, redisClusterNodes: cluster!.nodesEnv, queueShards: SHARDS }
        : { databaseUrl: db.url, redisUrl: REDIS_URL, queueName };
      // The idle window: what the rest of the machine and the mode's Redis do without this run.
      const idle0 = await sample(mode);
      await sleep(IDLE_WINDOW_MS);
      const before = await sample(mode);
      const commands = countRedisCommands();
      const result = await standardRun({ producer: producerProcess.sessionQueue(target), counter, n: N, sessions: SESSIONS, producerConcurrency: PRODUCER_CONCURRENCY, prefix: `${mode}-${index}`, timeoutMs: 120_000 });
      const after = await sample(mode);
      commands.restore();
      await worker.close({ graceMs: 5_000 });
      if (mode === 'single') await deleteQueueKeys(single, queueName);
      if ((result.finished['done'] ?? 0) !== N) throw new Error(`${mode}: ${JSON.stringify(result.finished)} of ${N} (${JSON.stringify(counter.errors)})`);
      if (!measure) return;
      const sent = diffCounts(commands.read(), {});
      for (const [name, count] of Object.entries(result.produced?.redis ?? {})) sent[name] = (sent[name] ?? 0) + count;
      runs[mode].push(figuresOf(mode, nodes[mode], idle0, before, after, N, sent));
    };

    for (const mode of MODES) await run(mode, -1, false);
    for (let r = 0; r < RUNS; r += 1) {
      const order = r % 2 === 0 ? MODES : ([...MODES].reverse() as Mode[]);
      for (const mode of order) await run(mode, r, true);
    }
    const loadAfter = loadavg().map((value) => round(value, 2));
    const single1 = summarise(runs.single);
    const cluster1 = summarise(runs.cluster);
    const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : round(a / b, 3));
    const machineRatio = ratio(cluster1.cpuMsPerInput['machine'] ?? null, single1.cpuMsPerInput['machine'] ?? null);
    const fleetRatio = ratio(cluster1.cpuMsPerInput['fleet'] ?? null, single1.cpuMsPerInput['fleet'] ?? null);
    const throughputRatio = ratio(cluster1.inputsPerSec, single1.inputsPerSec);
    const pct = (value: number | null) => (value === null ? null : round((value - 1) * 100, 1));
    stop();
    await report({
      name: 'cluster',
      command: COMMAND,
      runs: RUNS,
      sizes: { inputsPerRun: N, warmupRounds: 1, sessions: SESSIONS, workerConcurrency: CONCURRENCY, producerConcurrency: PRODUCER_CONCURRENCY, workerProcesses: 1, producer: 'child process', queueShards: SHARDS, cluster: '3 primaries + 3 replicas, test/support/redis-cluster.ts (no persistence)', single: `the machine's Redis, ${REDIS_URL}` },
      load: { loadAverageBefore: loadBefore, loadAverageAfter: loadAfter, note: 'other sessions ran test suites on the same 2 cores; `fleet` CPU counts only this run\'s processes (by pid), `machine` everything' },
      figures: { single: single1, cluster: cluster1 },
      ratio: {
        clusterVsSingleThroughput: throughputRatio,
        clusterVsSingleMachineCpuPerInput: machineRatio,
        clusterVsSingleFleetCpuPerInput: fleetRatio,
        overheadPercentMachineCpu: pct(machineRatio),
        overheadPercentFleetCpu: pct(fleetRatio),
        overheadPercentThroughput: throughputRatio === null ? null : round((1 / throughputRatio - 1) * 100, 1),
      },
      capacityModel: capacityModel(single1, cluster1),
      // The fleet's own processes (by pid) are the comparison: `machine` also counts whatever else the
      // machine ran, and when other work keeps both cores busy it is two cores' time over the inputs.
      targets: [
        { target: 'overhead <= 15 %: cluster CPU ms per input / single, the fleet\'s processes (worker, producer, its Postgres backends, every redis-server of the mode)', value: fleetRatio, met: fleetRatio === null ? null : fleetRatio <= 1.15 },
        { target: 'the same on machine CPU (counts other work on the machine too)', value: machineRatio, met: machineRatio === null ? null : machineRatio <= 1.15 },
        { target: 'the same on throughput: single inputs/s / cluster inputs/s', value: throughputRatio === null ? null : round(1 / throughputRatio, 3), met: throughputRatio === null ? null : 1 / throughputRatio <= 1.15 },
      ],
    });
  } finally {
    for (const node of [...nodes.single, ...nodes.cluster]) node.admin.disconnect();
    await producerProcess.close();
    single.disconnect();
    await cluster?.stop();
    await db.drop();
    await cleanupAll();
  }
}

/** One measured run's figures per input, from its three samples. */
function figuresOf(mode: Mode, nodes: readonly RedisNode[], idle: Sample, before: Sample, after: Sample, n: number, sent: Record<string, number>): RunFigures {
  const ms = after.at - before.at;
  const perInput = (value: number) => value / n;
  const byNode: RunFigures['byNode'] = {};
  for (const node of nodes) {
    const diff = diffCounts(after.stats[node.name] ?? {}, before.stats[node.name] ?? {});
    const idleDiff = diffCounts(before.stats[node.name] ?? {}, idle.stats[node.name] ?? {});
    const calls = workCalls(diff);
    const cpu = node.pid === null ? null : (after.redis.get(node.pid) ?? 0) - (before.redis.get(node.pid) ?? 0);
    const idleCpu = node.pid === null ? null : (before.redis.get(node.pid) ?? 0) - (idle.redis.get(node.pid) ?? 0);
    byNode[node.name] = {
      role: node.role,
      callsPerInput: perInput(calls.work),
      housekeepingPerInput: perInput(calls.housekeeping),
      byCommand: Object.fromEntries(Object.entries(diff).filter(([name]) => workCalls({ [name]: 1 }).work === 1).map(([name, calls]) => [name, perInput(calls)])),
      cpuMsPerInput: cpu === null ? null : perInput(cpu),
      // What the node did with no run on (other clients of the machine's Redis; cluster bus), scaled to the run's time.
      idleCallsPerSec: (workCalls(idleDiff).work / (before.at - idle.at)) * 1000,
      idleCpuMsPerInput: idleCpu === null ? null : perInput((idleCpu / (before.at - idle.at)) * ms),
    };
  }
  const redisCpu = (role?: RedisNode['role']) => nodes.filter((node) => role === undefined || node.role === role).reduce((sum, node) => sum + (byNode[node.name]!.cpuMsPerInput ?? 0), 0);
  const postgres = perInput(cpuDelta(before.postgres, after.postgres));
  const worker = perInput(after.worker - before.worker);
  const producer = after.producer === null || before.producer === null ? null : perInput(after.producer - before.producer);
  const machine = after.machine === null || before.machine === null ? null : perInput(after.machine - before.machine);
  const idleMachineBusy = after.machine === null || idle.machine === null || before.machine === null ? null : (before.machine - idle.machine) / (before.at - idle.at) / 2;
  return {
    mode,
    ms,
    inputsPerSec: (n / ms) * 1000,
    cpuMsPerInput: {
      worker,
      producer,
      postgres,
      redis: redisCpu(),
      redisPrimaries: mode === 'cluster' ? redisCpu('primary') : redisCpu('single'),
      redisReplicas: mode === 'cluster' ? redisCpu('replica') : null,
      fleet: worker + (producer ?? 0) + postgres + redisCpu(),
      machine,
    },
    idleMachineBusyFraction: idleMachineBusy,
    byNode,
    clientSentPerInput: Object.fromEntries(Object.entries(sent).sort((a, b) => b[1] - a[1]).map(([name, count]) => [name, perInput(count)])),
  };
}

await main();
