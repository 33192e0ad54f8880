/**
 * Whether `WINDOW_CACHE_MB` bounds what it says (bench/history/log-to-session-30.md, item 54): the window cache counts
 * its size with an estimate per row and per window (`src/store/steps/window-cache.ts`); this fills a cache
 * with no bound and compares the estimate with the heap the cached windows really take.
 *
 * Rows are built as a worker builds them: a row object like pg's parser makes (fresh strings, a
 * `Date`), decoded by the store's `decodeMessage`, then handed to `WindowCache.merge`. The heap is
 * read after full collections before and after filling, with every reference but the cache's
 * dropped. Three shapes, from many small windows to a few long ones.
 *
 * The floor is the measured heap itself: the ratio estimate / heap should be near 1 (below 1, the
 * cache holds more than its bound says; above, it holds less than it could).
 *
 * Run: `node --max-semi-space-size=32 --import tsx bench/window-cache-memory.bench.ts` — prints the
 * JSON and writes bench/results/window-cache-memory.json.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { decodeMessage } from '../src/store/rows/message-row.js';
import { WindowCache } from '../src/store/steps/window-cache.js';
import { report, round } from './lib/stats.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Shape {
  name: string;
  windows: number;
  rowsPerWindow: number;
  /** Characters of text per row (user and assistant text, tool output). */
  chars: number;
}

const SHAPES: Shape[] = [
  { name: '30,000 windows of 4 short rows', windows: 30_000, rowsPerWindow: 4, chars: 12 },
  { name: '3,000 windows of 40 rows of ~100 characters', windows: 3_000, rowsPerWindow: 40, chars: 100 },
  { name: '100 windows of 2,000 rows of ~300 characters', windows: 100, rowsPerWindow: 2_000, chars: 300 },
];

/**
 * A fresh flat string of `chars` characters, decoded from bytes as pg's parser decodes a column (a
 * string built with `+=` or `slice` would be a rope or a slice of a longer one, and weigh more).
 */
function text(chars: number, salt: number): string {
  let out = `t${salt}:`;
  while (out.length < chars) out += `w${(out.length * 31 + salt) % 997} `;
  return Buffer.from(out.slice(0, chars), 'latin1').toString('utf8');
}

/** Row `seq` of a window, cycling through the roles a standard input writes. */
function pgRow(seq: number, chars: number): Record<string, unknown> {
  const base = { seq, inputSeq: Math.ceil(seq / 4), round: 0, kind: 'message', state: 'active', createdAt: new Date(1_700_000_000_000 + seq), isError: false };
  switch (seq % 4) {
    case 1:
      return Object.assign(base, { role: 'user', content: text(chars, seq), toolCalls: null, toolCallId: null, name: null });
    case 2: {
      const toolCalls = [{ id: `call_${seq}`, name: 'search', arguments: JSON.stringify({ query: text(Math.min(chars, 40), seq) }) }];
      return Object.assign(base, { role: 'assistant', content: '', toolCalls, toolCallId: null, name: null });
    }
    case 3:
      return Object.assign(base, { role: 'tool', content: text(chars, seq), toolCalls: null, toolCallId: `call_${seq - 1}`, name: 'search' });
    default:
      return Object.assign(base, { role: 'assistant', content: text(chars, seq), toolCalls: null, toolCallId: null, name: null });
  }
}

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function measure(shape: Shape): { estimateMiB: number; heapMiB: number; ratio: number } {
  let cache: WindowCache | null = new WindowCache({ maxBytes: Number.MAX_SAFE_INTEGER });
  const before = heapUsed();
  for (let w = 0; w < shape.windows; w += 1) {
    const sessionId = `s-${w}`;
    const rows = Array.from({ length: shape.rowsPerWindow }, (_, i) => decodeMessage(sessionId, pgRow(i + 1, shape.chars)));
    cache.merge(sessionId, null, 1, rows);
  }
  const after = heapUsed();
  const estimate = cache.size().bytes;
  cache = null;
  const mib = (bytes: number) => bytes / 2 ** 20;
  return { estimateMiB: round(mib(estimate), 1), heapMiB: round(mib(after - before), 1), ratio: round(estimate / (after - before), 3) };
}

const results = SHAPES.map((shape) => Object.assign({ shape: shape.name }, measure(shape)));
const ratios = results.map((result) => result.ratio);
await report({
  name: 'window-cache-memory',
  command: 'node --max-semi-space-size=32 --import tsx bench/window-cache-memory.bench.ts',
  runs: 1,
  sizes: { shapes: SHAPES },
  figures: { windows: results },
  floor: { name: 'heap measured after full collections (heapUsed after − before)' },
  ratio: { estimateOverHeapMin: Math.min(...ratios), estimateOverHeapMax: Math.max(...ratios) },
  // Under 0.9 the cache would hold noticeably more than WINDOW_CACHE_MB; over 1.25 it would waste a
  // quarter of it.
  targets: [{ target: 'estimate / heap from 0.9 to 1.25 for every shape', value: `${Math.min(...ratios)}–${Math.max(...ratios)}`, met: ratios.every((r) => r >= 0.9 && r <= 1.25) }],
});
