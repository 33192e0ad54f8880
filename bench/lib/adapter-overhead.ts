import { writeFile } from 'node:fs/promises';
import { median, round } from './stats.js';

export interface AdapterOverheadOptions {
  name: string;
  chunks: number;
  runs: number;
  /** Unrecorded runs first, so JIT warm-up is not measured. */
  warmup: number;
  /** Queues the two responses (one per side) on the fake server before each pair of runs. */
  prepare(): void;
  /** One run of the raw SDK iterating the stream, in ms. */
  raw(): Promise<number>;
  /** One run of the adapter over the same stream, in ms. */
  adapter(): Promise<number>;
}

/**
 * The adapter's cost per streamed chunk against the raw SDK iterating the same fake stream: both
 * sides measured in the same process, alternating which goes first so neither always pays for the
 * other's garbage; medians reported and written to `bench/results/<name>.json`.
 */
export async function measureAdapterOverhead(options: AdapterOverheadOptions): Promise<void> {
  const raw: number[] = [];
  const adapter: number[] = [];
  for (let run = -options.warmup; run < options.runs; run += 1) {
    options.prepare();
    const rawFirst = (run + options.warmup) % 2 === 0;
    const first = rawFirst ? await options.raw() : await options.adapter();
    const second = rawFirst ? await options.adapter() : await options.raw();
    const [rawMs, adapterMs] = rawFirst ? [first, second] : [second, first];
    if (run >= 0) {
      raw.push(rawMs);
      adapter.push(adapterMs);
    }
  }
  const rawMsMedian = median(raw);
  const adapterMsMedian = median(adapter);
  const result = {
    name: options.name,
    chunks: options.chunks,
    runs: options.runs,
    rawMsMedian: round(rawMsMedian, 2),
    adapterMsMedian: round(adapterMsMedian, 2),
    overheadPerChunkUs: round(((adapterMsMedian - rawMsMedian) * 1000) / options.chunks, 3),
    ratio: round(adapterMsMedian / rawMsMedian, 3),
    node: process.version,
    date: new Date().toISOString(),
  };
  const json = JSON.stringify(result, null, 2);
  console.log(json);
  await writeFile(new URL(`../results/${options.name}.json`, import.meta.url), `${json}\n`);
}
