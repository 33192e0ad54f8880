/**
 * Turns the runs into the JSON's per-system figures (medians over rounds), the ratios and the issue's
 * targets.
 */
import { median, round } from '../../lib/stats.js';
import type { CompositeFloor } from './floors-run.js';
import type { RunResult } from './system-run.js';

export const LOOPFLEET = 'loopfleet';
export const FLOOR = 'bullmq-floor';

export interface KindRecord {
  /** Round 0: every sweep point's saturation figure. */
  sweep: Array<{ settings: Record<string, string | number>; inputsPerSec: number | null; verifyOk: boolean; error?: string }>;
  best: Record<string, string | number> | null;
  /** The best point's run in each measured round (1…). */
  rounds: RunResult[];
  errors: string[];
}

export interface KindFigures {
  inputsPerSec: number | null;
  cpuMsPerInput: Record<string, number | null>;
  peakRssMb: Record<string, number | null>;
  latencyLow: { p50: number; p99: number } | null;
  latencyHalf: { p50: number; p99: number; rate: number } | null;
  valid: boolean;
}

const med = (values: number[]) => (values.length === 0 ? null : round(median(values), 3));

export function figures(record: KindRecord): KindFigures {
  const runs = record.rounds;
  const saturation = runs.filter((run) => run.inputsPerSec > 0);
  const keys = new Set(saturation.flatMap((run) => Object.keys(run.cpuMsPerInput)));
  const cpu = Object.fromEntries([...keys].map((key) => [key, med(saturation.map((run) => run.cpuMsPerInput[key]).filter((v): v is number => typeof v === 'number'))]));
  const rssKeys = new Set(runs.flatMap((run) => Object.keys(run.peakRssMb)));
  const rss = Object.fromEntries([...rssKeys].map((key) => [key, runs.reduce<number | null>((max, run) => Math.max(max ?? 0, run.peakRssMb[key] ?? 0), null)]));
  const lat = (index: number) => {
    const points = runs.flatMap((run) => (run.latency[index] !== undefined && run.latency[index]!.count > 0 ? [run.latency[index]!] : []));
    if (points.length === 0) return null;
    return { p50: med(points.map((p) => p.p50))!, p99: med(points.map((p) => p.p99))!, rate: med(points.map((p) => p.rate))! };
  };
  const low = lat(0);
  return {
    inputsPerSec: med(saturation.map((run) => run.inputsPerSec)),
    cpuMsPerInput: cpu,
    peakRssMb: rss,
    latencyLow: low === null ? null : { p50: low.p50, p99: low.p99 },
    latencyHalf: lat(1),
    valid: runs.length > 0 && runs.every((run) => run.verify.ok) && record.errors.length === 0,
  };
}

interface Target {
  target: string;
  value: unknown;
  met: boolean | null;
}

/** The targets (all ratios in the same run); `met: null` when a side is missing. */
export function targets(all: Record<string, Partial<Record<'scripted' | 'openai', KindFigures>>>, floor: CompositeFloor | null, hopsP99: number | null): { ratios: Record<string, unknown>; targets: Target[] } {
  const peers = Object.keys(all).filter((name) => name !== LOOPFLEET && name !== FLOOR);
  const lf = all[LOOPFLEET];
  const list: Target[] = [];
  const ratios: Record<string, unknown> = {};
  for (const kind of ['scripted', 'openai'] as const) {
    const valid = peers.filter((name) => all[name]?.[kind]?.valid === true && all[name]?.[kind]?.inputsPerSec != null);
    const best = valid.sort((a, b) => all[b]![kind]!.inputsPerSec! - all[a]![kind]!.inputsPerSec!)[0];
    const mine = lf?.[kind];
    const bestFig = best === undefined ? undefined : all[best]![kind]!;
    const speed = mine?.inputsPerSec != null && bestFig?.inputsPerSec != null ? round(mine.inputsPerSec / bestFig.inputsPerSec, 3) : null;
    const cpuRatio = mine?.cpuMsPerInput['machine'] != null && bestFig?.cpuMsPerInput['machine'] != null ? round(mine.cpuMsPerInput['machine']! / bestFig.cpuMsPerInput['machine']!, 3) : null;
    ratios[kind] = {
      bestPeer: best ?? null,
      loopfleetVsBestPeerInputsPerSec: speed,
      loopfleetVsBestPeerCpuPerInput: cpuRatio,
      perSystemVsLoopfleet: Object.fromEntries(Object.keys(all).map((name) => [name, all[name]?.[kind]?.inputsPerSec != null && mine?.inputsPerSec ? round(all[name]![kind]!.inputsPerSec! / mine.inputsPerSec, 3) : null])),
      perSystemVsBullmqFloor: Object.fromEntries(Object.keys(all).map((name) => [name, all[name]?.[kind]?.inputsPerSec != null && all[FLOOR]?.scripted?.inputsPerSec ? round(all[name]![kind]!.inputsPerSec! / all[FLOOR]!.scripted!.inputsPerSec!, 3) : null])),
      perSystemVsCompositeFloor: Object.fromEntries(Object.keys(all).map((name) => [name, all[name]?.[kind]?.inputsPerSec != null && floor ? round(all[name]![kind]!.inputsPerSec! / floor.compositeInputsPerSec, 3) : null])),
    };
    list.push({ target: `${kind}: loopfleet inputs/s >= 2x the best peer's (${best ?? 'no valid peer'})`, value: speed, met: speed === null ? null : speed >= 2 && mine!.valid });
    list.push({ target: `${kind}: loopfleet machine CPU ms/input <= 1/2 of the best peer's (${best ?? 'no valid peer'})`, value: cpuRatio, met: cpuRatio === null ? null : cpuRatio <= 0.5 });
  }
  const share = lf?.scripted?.inputsPerSec != null && floor ? round(lf.scripted.inputsPerSec / floor.compositeInputsPerSec, 3) : null;
  list.push({ target: 'scripted: loopfleet >= 60% of the composite floor 1/(1/BullMQ + 1/Postgres + 1/XADD)', value: share, met: share === null ? null : share >= 0.6 });
  const half = lf?.scripted?.latencyHalf ?? null;
  const peerHalf = peers.map((name) => all[name]?.scripted?.latencyHalf).filter((l): l is NonNullable<typeof l> => l != null);
  const bestP50 = peerHalf.length === 0 ? null : Math.min(...peerHalf.map((l) => l.p50));
  const bestP99 = peerHalf.length === 0 ? null : Math.min(...peerHalf.map((l) => l.p99));
  list.push({ target: 'accept->start p50 at half of own saturation <= the best peer\'s', value: { loopfleet: half?.p50 ?? null, bestPeer: bestP50 }, met: half === null || bestP50 === null ? null : half.p50 <= bestP50 });
  list.push({ target: 'accept->start p99 at half of own saturation <= the best peer\'s', value: { loopfleet: half?.p99 ?? null, bestPeer: bestP99 }, met: half === null || bestP99 === null ? null : half.p99 <= bestP99 });
  const low = lf?.scripted?.latencyLow ?? null;
  list.push({ target: 'accept->start p99 at 20 inputs/s <= 2x the raw dispatch hops\' p99 (dispatch-hops pathSumMs.p99, same run)', value: { loopfleet: low?.p99 ?? null, rawHopsP99: hopsP99 }, met: low === null || hopsP99 === null ? null : low.p99 <= 2 * hopsP99 });
  return { ratios, targets: list };
}
