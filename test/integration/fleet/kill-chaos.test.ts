import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { seededRandom } from '../../support/seeded-random.js';
import type { WorkerProcess } from '../../support/worker-process.js';
import { sessionEvents } from './fixtures/fleet-helpers.js';
import { ProcessFleet } from './fixtures/process-fleet.js';

/**
 * kill -9 at random (I1–I3, I6 in docs/invariants.md): three `loopfleet worker` processes
 * run 20 sessions × 5 inputs against a slow model; every 1–2 s one ready worker is SIGKILLed and a
 * replacement started. Every input must finish exactly once, `completed`, in order, and each
 * session's history must alternate user/assistant with every user text exactly once.
 */

const SESSIONS = 20;
const INPUTS = 5;
const MAX_KILLS = 8;

describe('kill -9 of worker processes during a run', () => {
  let pf: ProcessFleet;

  beforeAll(async () => {
    pf = await ProcessFleet.create('chaos', { LEASE_TTL_MS: '2000', WORKER_CONCURRENCY: '4' }, { replyDelayMs: 700 });
  }, 60_000);

  afterAll(async () => {
    await pf?.close();
  });

  it(`${SESSIONS} sessions × ${INPUTS} inputs, a worker SIGKILLed every 1–2 s: every input done exactly once, in order`, async () => {
    const { fleet } = pf;
    const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
    const next = seededRandom(seed);
    const started = Date.now();
    await Promise.all([0, 1, 2].map(() => fleet.processes.start(pf.workerEnv)));
    const sessions = Array.from({ length: SESSIONS }, (_, i) => `chaos-${i}`);
    const text = (sessionId: string, n: number) => `${sessionId} message ${n}`;
    for (let n = 0; n < INPUTS; n += 1) {
      for (const sessionId of sessions) await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text(sessionId, n) } });
    }

    const finished = async () => {
      const result = await fleet.pool.query<{ open: string }>(`SELECT count(*) AS open FROM session_inputs WHERE status IN ('pending', 'running')`);
      return Number(result.rows[0]!.open) === 0;
    };
    const ready = (worker: WorkerProcess) => worker.exit === null && worker.workerId !== undefined;
    const killed: { pid: number; atMs: number }[] = [];
    const deadline = started + 150_000;
    while (!(await finished())) {
      if (Date.now() > deadline) throw new Error(`chaos run (seed ${seed}) did not finish in time\n${fleet.processes.diagnostics()}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000 + Math.floor(next() * 1_000)));
      const candidates = fleet.processes.alive.filter(ready);
      if (killed.length >= MAX_KILLS || candidates.length < 2) continue;
      const victim = candidates[Math.floor(next() * candidates.length)]!;
      killed.push({ pid: victim.pid, atMs: Date.now() - started });
      await victim.kill();
      fleet.processes.spawn(pf.workerEnv);
    }
    const elapsedMs = Date.now() - started;
    // One more input per session once the killing stopped: its drain also publishes the input_finished
    // of an input whose holder died between the terminal commit and the XADD (lost-finish-events.ts).
    for (const sessionId of sessions) await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input: text(sessionId, INPUTS) } });

    let resumed = 0;
    let maxAttempts = 0;
    for (const sessionId of sessions) {
      const inputs = await fleet.waitForSessionFinished(sessionId, INPUTS + 1, 60_000);
      expect(inputs.map((input) => [input.seq, input.status, input.result?.status, input.result?.finalText])).toEqual(
        Array.from({ length: INPUTS + 1 }, (_, n) => [n + 1, 'done', 'completed', `Echo: ${text(sessionId, n)}`]),
      );
      for (let i = 1; i < inputs.length; i += 1) expect(inputs[i]!.startedAt!.getTime()).toBeGreaterThanOrEqual(inputs[i - 1]!.finishedAt!.getTime());
      resumed += inputs.filter((input) => input.attempts > 1).length;
      maxAttempts = Math.max(maxAttempts, ...inputs.map((input) => input.attempts));
      // One user and one assistant message per input, alternating, each user text exactly once.
      expect(await fleet.transcript(sessionId)).toEqual(
        Array.from({ length: INPUTS + 1 }, (_, n) => [`user: ${text(sessionId, n)}`, `assistant: Echo: ${text(sessionId, n)}`]).flat(),
      );
      // Exactly one input_finished per input (I6), in order.
      const events = await sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
      expect(events.filter((event) => event.type === 'input_finished').map((event) => event.data.inputSeq)).toEqual([1, 2, 3, 4, 5, 6]);
    }
    expect(killed.length).toBeGreaterThanOrEqual(2);
    console.info(
      `chaos (seed ${seed}): ${SESSIONS * INPUTS} inputs in ${elapsedMs} ms; ${killed.length} workers killed at ${killed.map((kill) => `${kill.atMs}ms`).join(', ')}; ` +
        `${resumed} inputs taken over mid-run (max attempts ${maxAttempts}); ${fleet.processes.all.length} processes started`,
    );
  }, 240_000);
});
