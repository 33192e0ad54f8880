/**
 * What making a step's data storable costs the hot path (`src/core/storable-text.ts`, bench/history/log-to-session-30.md,
 * item 53): the loop walks every message and part of a step for U+0000 and lone surrogates before
 * committing it. Measured on the messages of a standard input's three steps (user text, an assistant
 * tool call, the tool's result, a final answer of ten deltas' worth of text, and their usage), all
 * clean, as nearly every step is.
 *
 * Floor, in the same process: `JSON.stringify` of the same step, which the store does to every step
 * anyway (its parts go to Postgres as JSON), so the ratio says what the walk adds to encoding a step.
 * Both are timed in alternating batches after a warm-up; medians over the batches.
 *
 * Run: `node --max-semi-space-size=32 --import tsx bench/storable.bench.ts` — prints the JSON and
 * writes bench/results/storable.json.
 */
import { storable } from '../src/core/storable-text.js';
import { median, report, round } from './lib/stats.js';

const BATCHES = 15;
const STEPS_PER_BATCH = 20_000;

/** A standard input's steps, with strings built at run time (as parsed JSON and streamed text are). */
function standardSteps(n: number): unknown[] {
  const text = (words: number, tag: string) => Array.from({ length: words }, (_, i) => `${tag}${i % 7}`).join(' ');
  const usage = () => ({ promptTokens: 120 + n, completionTokens: 30, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 150 + n, llmCalls: 1 });
  const callId = `call_${n}`;
  return [
    {
      messages: [
        { role: 'user', content: text(12, `u${n}`) },
        { role: 'assistant', content: '', toolCalls: [{ id: callId, name: 'noop', arguments: JSON.stringify({ query: text(3, 'q'), limit: 5 }) }] },
      ],
      usage: usage(),
      ledger: { toolCallId: callId, name: 'noop', input: { query: text(3, 'q'), limit: 5 } },
    },
    { messages: [{ role: 'tool', content: text(8, `r${n}`), toolCallId: callId, name: 'noop' }], ledger: { toolCallId: callId, output: text(8, 'o') } },
    { messages: [{ role: 'assistant', content: text(40, `a${n}`) }], usage: usage(), finalText: text(40, `a${n}`) },
  ];
}

function batch(steps: readonly unknown[], fn: (step: unknown) => unknown): number {
  let sink = 0;
  const started = performance.now();
  for (let i = 0; i < STEPS_PER_BATCH; i += 1) {
    const out = fn(steps[i % steps.length]);
    if (out === null) sink += 1;
  }
  const ms = performance.now() - started;
  if (sink > 0) throw new Error('unreachable');
  return (ms * 1000) / STEPS_PER_BATCH;
}

const steps = Array.from({ length: 64 }, (_, n) => standardSteps(n)).flat();
// Every step is clean, so storable() returns each one as it is: the bench times the walk alone.
for (const step of steps) if (storable(step) !== step) throw new Error('storable changed a clean step');

const walk = (step: unknown) => storable(step);
const encode = (step: unknown) => JSON.stringify(step);
for (let i = 0; i < 3; i += 1) {
  batch(steps, walk);
  batch(steps, encode);
}
const walkUs: number[] = [];
const encodeUs: number[] = [];
for (let i = 0; i < BATCHES; i += 1) {
  // Alternate which goes first, so neither always runs on a warmer (or busier) machine.
  if (i % 2 === 0) {
    walkUs.push(batch(steps, walk));
    encodeUs.push(batch(steps, encode));
  } else {
    encodeUs.push(batch(steps, encode));
    walkUs.push(batch(steps, walk));
  }
}

const storableUsPerStep = round(median(walkUs), 3);
const stringifyUsPerStep = round(median(encodeUs), 3);
await report({
  name: 'storable',
  command: 'node --max-semi-space-size=32 --import tsx bench/storable.bench.ts',
  runs: BATCHES,
  sizes: { stepsPerBatch: STEPS_PER_BATCH, distinctSteps: steps.length, stepsPerStandardInput: 3 },
  figures: { storableUsPerStep, storableUsPerStandardInput: round(storableUsPerStep * 3, 3), batchesUs: walkUs.map((v) => round(v, 3)) },
  floor: { name: 'JSON.stringify of the same step', usPerStep: stringifyUsPerStep, batchesUs: encodeUs.map((v) => round(v, 3)) },
  ratio: { storableOverStringify: round(storableUsPerStep / stringifyUsPerStep, 3) },
  targets: [],
});
