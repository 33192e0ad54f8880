/**
 * The cluster bench's arithmetic: one run's figures per input, their medians over the runs of a mode,
 * and the capacity model — how many primaries N inputs/s need — from what the run measured.
 */
import { median, round } from './stats.js';

export interface NodeFigures {
  role: 'single' | 'primary' | 'replica';
  /** `INFO commandstats` calls per input, housekeeping excluded; calls made inside scripts included. */
  callsPerInput: number;
  /** Slot-map refreshes, INFO, PING… per input. */
  housekeepingPerInput: number;
  byCommand: Record<string, number>;
  /** The node's `redis-server` CPU (by pid) per input; null without `/proc`. */
  cpuMsPerInput: number | null;
  /** Calls per second the node served with no run on (other clients; housekeeping excluded). */
  idleCallsPerSec: number;
  /** The node's idle CPU rate over the run's time, per input: how much of `cpuMsPerInput` is not the run's. */
  idleCpuMsPerInput: number | null;
}

export interface RunFigures {
  mode: string;
  ms: number;
  inputsPerSec: number;
  cpuMsPerInput: Record<string, number | null>;
  /** Share of the machine's two cores busy in the idle second before the run (other work). */
  idleMachineBusyFraction: number | null;
  byNode: Record<string, NodeFigures>;
  clientSentPerInput: Record<string, number>;
}

const med = (values: readonly (number | null)[], digits = 3): number | null => {
  const known = values.filter((value): value is number => value !== null && Number.isFinite(value));
  return known.length === 0 ? null : round(median(known), digits);
};

export interface ModeSummary {
  inputsPerSec: number;
  runsInputsPerSec: number[];
  cpuMsPerInput: Record<string, number | null>;
  idleMachineBusyFraction: (number | null)[];
  /** Redis calls per input on the nodes that take writes (the single node, or the primaries summed). */
  redisCallsPerInput: number;
  /** Per primary (or the single node): calls and CPU per input. */
  byNode: Record<string, Omit<NodeFigures, 'byCommand'> & { topCommands: Record<string, number> }>;
  /** Commands the clients sent (top level: a script call is one), worker and producer. */
  clientSentPerInput: Record<string, number>;
}

/** Medians over the runs of one mode. */
export function summarise(runs: readonly RunFigures[]): ModeSummary {
  const first = runs[0]!;
  const keys = Object.keys(first.cpuMsPerInput);
  const byNode: ModeSummary['byNode'] = {};
  for (const [name, node] of Object.entries(first.byNode)) {
    const of = (pick: (figures: NodeFigures) => number | null) => med(runs.map((run) => pick(run.byNode[name]!)));
    const commands = new Set(runs.flatMap((run) => Object.keys(run.byNode[name]!.byCommand)));
    const topCommands = Object.fromEntries(
      [...commands]
        .map((command) => [command, med(runs.map((run) => run.byNode[name]!.byCommand[command] ?? 0), 2) ?? 0] as const)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 10),
    );
    byNode[name] = {
      role: node.role,
      callsPerInput: of((f) => f.callsPerInput) ?? 0,
      housekeepingPerInput: of((f) => f.housekeepingPerInput) ?? 0,
      cpuMsPerInput: of((f) => f.cpuMsPerInput),
      idleCallsPerSec: of((f) => f.idleCallsPerSec) ?? 0,
      idleCpuMsPerInput: of((f) => f.idleCpuMsPerInput),
      topCommands,
    };
  }
  const sentNames = new Set(runs.flatMap((run) => Object.keys(run.clientSentPerInput)));
  const clientSent = Object.fromEntries([...sentNames].map((name) => [name, med(runs.map((run) => run.clientSentPerInput[name] ?? 0), 2) ?? 0]));
  const sentTotal = round(Object.values(clientSent).reduce((a, b) => a + b, 0), 2);
  return {
    inputsPerSec: round(median(runs.map((run) => run.inputsPerSec)), 0),
    runsInputsPerSec: runs.map((run) => round(run.inputsPerSec, 0)),
    cpuMsPerInput: Object.fromEntries(keys.map((key) => [key, med(runs.map((run) => run.cpuMsPerInput[key] ?? null))])),
    idleMachineBusyFraction: runs.map((run) => (run.idleMachineBusyFraction === null ? null : round(run.idleMachineBusyFraction, 2))),
    redisCallsPerInput: round(Object.values(byNode).filter((node) => node.role !== 'replica').reduce((sum, node) => sum + node.callsPerInput, 0), 2),
    byNode,
    clientSentPerInput: Object.assign({ total: sentTotal }, clientSent),
  };
}

/** A primary's CPU budget: 70 % of one core (Redis runs commands on one thread), in ms of CPU per second. */
export const PRIMARY_BUDGET_MS_PER_SEC = 700;
const RATES = [1_000, 5_000, 10_000, 50_000];

/**
 * How many primaries N inputs/s need, two ways: (a) by commands — the cluster's calls per input (all
 * primaries) at the single node's measured CPU per call; (b) by the primaries' own CPU per input
 * measured in cluster mode. Both assume the sessions spread evenly over the primaries (hash slots)
 * and a primary at no more than {@link PRIMARY_BUDGET_MS_PER_SEC}. Each primary needs a replica too.
 */
export function capacityModel(single: ModeSummary, cluster: ModeSummary): Record<string, unknown> {
  const singleNode = single.byNode['single'];
  const singleCpu = singleNode?.cpuMsPerInput ?? null;
  const cpuPerCall = singleCpu === null || !singleNode ? null : singleCpu / singleNode.callsPerInput;
  const primaries = Object.values(cluster.byNode).filter((node) => node.role === 'primary');
  const replicas = Object.values(cluster.byNode).filter((node) => node.role === 'replica');
  const callsTotal = cluster.redisCallsPerInput;
  const primaryCpu = primaries.every((node) => node.cpuMsPerInput !== null) ? primaries.reduce((sum, node) => sum + node.cpuMsPerInput!, 0) : null;
  const replicaCpu = replicas.every((node) => node.cpuMsPerInput !== null) ? replicas.reduce((sum, node) => sum + node.cpuMsPerInput!, 0) : null;
  const maxShare = primaries.length === 0 || callsTotal === 0 ? null : Math.max(...primaries.map((node) => node.callsPerInput)) / (callsTotal / primaries.length);
  const perPrimaryByCalls = cpuPerCall === null ? null : PRIMARY_BUDGET_MS_PER_SEC / (callsTotal * cpuPerCall);
  const perPrimaryByCpu = primaryCpu === null ? null : PRIMARY_BUDGET_MS_PER_SEC / primaryCpu;
  const need = (perPrimary: number | null, rate: number) => (perPrimary === null ? null : Math.max(1, Math.ceil(rate / perPrimary)));
  return {
    assumption: `a primary runs at most ${PRIMARY_BUDGET_MS_PER_SEC} ms of CPU a second (70 % of its one command thread's core); sessions spread evenly over the primaries; every primary has one replica, on a core of its own`,
    singleNode: {
      callsPerInput: singleNode?.callsPerInput ?? null,
      cpuMsPerInput: singleCpu,
      cpuMsPerCall: cpuPerCall === null ? null : round(cpuPerCall, 5),
      inputsPerSecAtBudget: singleCpu === null ? null : round(PRIMARY_BUDGET_MS_PER_SEC / singleCpu, 0),
    },
    cluster: {
      primaries: primaries.length,
      callsPerInputAllPrimaries: callsTotal,
      callsPerInputPerPrimary: round(callsTotal / Math.max(1, primaries.length), 2),
      busiestPrimaryShareOfEven: maxShare === null ? null : round(maxShare, 3),
      primariesCpuMsPerInput: primaryCpu === null ? null : round(primaryCpu, 3),
      replicasCpuMsPerInput: replicaCpu === null ? null : round(replicaCpu, 3),
      inputsPerSecPerPrimaryByCalls: perPrimaryByCalls === null ? null : round(perPrimaryByCalls, 0),
      inputsPerSecPerPrimaryByCpu: perPrimaryByCpu === null ? null : round(perPrimaryByCpu, 0),
    },
    primariesNeeded: RATES.map((rate) => ({ inputsPerSec: rate, byCalls: need(perPrimaryByCalls, rate), byMeasuredCpu: need(perPrimaryByCpu, rate) })),
  };
}
