/**
 * kill -9 with child sessions (docs/child-sessions.md, "Crashes"; I3, I6), on real `loopfleet worker`
 * processes: a `lead` parent fans out to two `reader` children through the fleet's model server (slow
 * answers keep the children in flight). Each repetition SIGKILLs the worker running the parent right
 * after `subagent_started` reached the parent's stream, then the worker running a child mid-run
 * (its input running, under that worker's lease), starting a replacement after each kill. Afterwards:
 * one child per call, one delivery per result, the parent input ends once `completed` with both
 * answers in call order, and every input has exactly one `input_finished`.
 *
 * The random parts (extra delay before each kill, which child) come from a printed seed
 * (KILL_CHILDREN_SEED reproduces it); the many exact kill points are in
 * test/unit/core/loop/children-crash.test.ts and its Postgres twin.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolViolations } from '../../../src/core/history/index.js';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import type { WorkerProcess } from '../../support/worker-process.js';
import { sessionEvents } from '../fleet/fixtures/fleet-helpers.js';
import { ProcessFleet } from '../fleet/fixtures/process-fleet.js';
import { seededRandom } from '../../support/seeded-random.js';

const REPS = 4;
const REPLY_DELAY_MS = 600;
const spawnTag = (task: string) => `[tool:spawn_agent {"agent":"reader","task":"${task}"}]`;

describe('kill -9 of workers running a parent and its children', () => {
  let pf: ProcessFleet;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loopfleet-kill-children-'));
    const file = join(dir, 'agents.json');
    await writeFile(file, JSON.stringify([{ name: 'lead', subagents: ['reader'] }, { name: 'reader' }]));
    pf = await ProcessFleet.create(
      'kill_children',
      { LOOPFLEET_AGENTS: file, LEASE_TTL_MS: '2000', WORKER_CONCURRENCY: '4', SWEEP_EVERY_MS: '500', SWEEP_GRACE_MS: '500' },
      { replyDelayMs: REPLY_DELAY_MS },
    );
    await Promise.all([0, 1].map(() => pf.fleet.processes.start(pf.workerEnv)));
  }, 60_000);

  afterAll(async () => {
    await pf?.close();
  });

  it(`${REPS} repetitions: parent's worker killed after the spawn, a child's worker killed mid-run`, async () => {
    const { fleet } = pf;
    const seed = Number(process.env.KILL_CHILDREN_SEED ?? Date.now() % 1_000_000);
    const random = seededRandom(seed);
    console.info(`kill-children: seed ${seed} (KILL_CHILDREN_SEED=${seed} reproduces the schedule)`);
    const started = Date.now();
    const log: string[] = [];

    /** The live worker process holding `sessionId`'s lease with its input running, once there is one. */
    const runningOn = async (sessionId: string): Promise<WorkerProcess | undefined> => {
      const { rows } = await fleet.pool.query<{ owner: string | null }>(
        `SELECT s.lease_owner AS owner FROM sessions s
          WHERE s.id = $1 AND s.lease_expires_at > now()
            AND EXISTS (SELECT 1 FROM session_inputs i WHERE i.session_id = s.id AND i.status = 'running')`,
        [sessionId],
      );
      const owner = rows[0]?.owner;
      return owner == null ? undefined : fleet.processes.alive.find((worker) => worker.workerId === owner);
    };
    const events = (sessionId: string) => sessionEvents(fleet.redis, fleet.config.queueName, sessionId);
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    for (let rep = 0; rep < REPS; rep += 1) {
      const parent = `lead-${rep}`;
      const calls = ['call_1_0', 'call_1_1'];
      const children = calls.map((call) => `${parent}:sub:${call}`);
      const tasks = [`read A${rep}`, `read B${rep}`];
      // The replacements take jobs (and serve `lead`) before the next parent is created.
      await Promise.all(fleet.processes.alive.map((worker) => worker.ready()));
      await fleet.store.createSession({ id: parent, agent: 'lead' });
      await acceptAndKick(fleet.acceptDeps, { sessionId: parent, kind: 'send', payload: { input: tasks.map(spawnTag).join(' ') } });

      // The parent's worker, while its first model call is in flight.
      const parentWorker = await fleet.waitFor(`the worker running ${parent}`, () => runningOn(parent), 30_000);
      const firstSpawn = await fleet.waitFor(`subagent_started on ${parent}`, async () => (await events(parent)).find((event) => event.type === 'subagent_started'), 30_000);
      const parentDelay = Math.floor(random() * 50);
      if (parentDelay > 0) await pause(parentDelay); // a random kill point just after the spawn, not a synchronisation
      await parentWorker.kill();
      fleet.processes.spawn(pf.workerEnv);
      log.push(`rep ${rep}: parent's worker ${parentWorker.pid} killed ${parentDelay} ms after subagent_started(${String(firstSpawn.data.childSessionId)})`);

      // A child mid-run: its input running under a live worker's lease (after a takeover if its first worker was the one killed).
      const victimIndex = Math.floor(random() * children.length);
      const order = [children[victimIndex]!, children[1 - victimIndex]!];
      const victim = await fleet.waitFor(
        `a child of ${parent} running on a live worker`,
        async () => {
          for (const child of order) {
            const worker = await runningOn(child);
            if (worker !== undefined) return { child, worker };
          }
          return undefined;
        },
        30_000,
      );
      const childDelay = Math.floor(random() * (REPLY_DELAY_MS / 2));
      if (childDelay > 0) await pause(childDelay); // a random point inside the child's model call
      await victim.worker.kill();
      fleet.processes.spawn(pf.workerEnv);
      log.push(`rep ${rep}: ${victim.child}'s worker ${victim.worker.pid} killed ${childDelay} ms into its run`);

      // Everything ends: the parent's own input and the two deliveries steered into it, each child's task.
      const inbox = await fleet.waitForSessionFinished(parent, 3, 60_000);
      for (const child of children) await fleet.waitForSessionFinished(child, 1, 60_000);

      // One child per call (I3): by id, by count, in the database.
      const { rows: sessions } = await fleet.pool.query<{ id: string }>(`SELECT id FROM sessions WHERE parent_session_id = $1 OR root_session_id = $1 ORDER BY id`, [parent]);
      expect(sessions.map((row) => row.id).filter((id) => id !== parent), `rep ${rep}: child sessions`).toEqual(children);
      expect((await fleet.store.listChildren(parent)).map((child) => [child.sessionId, child.toolCallId, child.status])).toEqual(
        children.map((child, index) => [child, calls[index], 'completed']),
      );
      for (const [index, child] of children.entries()) {
        const inputs = await fleet.store.listInputs(child, { limit: 100 });
        expect(inputs.map((input) => [input.seq, input.status, input.result?.finalText]), `rep ${rep}: ${child} inputs`).toEqual([[1, 'done', `Echo: ${tasks[index]}`]]);
        expect(await fleet.transcript(child), `rep ${rep}: ${child} history`).toEqual([`user: ${tasks[index]}`, `assistant: Echo: ${tasks[index]}`]);
        const childEvents = await events(child);
        expect(childEvents.filter((event) => event.type === 'input_finished').map((event) => event.data.inputSeq), `rep ${rep}: ${child} input_finished`).toEqual([1]);
      }

      // One delivery per result, both steered into the parent's input; the parent input ends once.
      const deliveries = inbox.filter((input) => input.kind === 'child');
      expect(deliveries.map((input) => input.inputId).sort(), `rep ${rep}: deliveries`).toEqual(calls.map((call) => `child:${call}`));
      for (const delivery of deliveries) expect([delivery.status, delivery.steeredInto], `rep ${rep}: ${delivery.inputId}`).toEqual(['done', 1]);
      const own = inbox.filter((input) => input.kind !== 'child');
      expect(own.map((input) => [input.seq, input.status, input.result?.status, input.result?.finalText]), `rep ${rep}: parent input`).toEqual([
        [1, 'done', 'completed', `Done: Echo: ${tasks[0]} | Echo: ${tasks[1]}`],
      ]);
      const history = (await fleet.store.loadHistory(parent)).map((row) => row.message);
      expect(protocolViolations(history), `rep ${rep}: parent history`).toEqual([]);
      expect(history.flatMap((message) => (message.role === 'tool' ? [[message.toolCallId, message.content]] : []))).toEqual(
        calls.map((call, index) => [call, `Echo: ${tasks[index]}`]),
      );

      // The parent's stream: one input_finished per input (its own and the two deliveries), each child started at most once.
      const parentEvents = await events(parent);
      const finished = parentEvents.filter((event) => event.type === 'input_finished').map((event) => Number(event.data.inputSeq));
      expect(finished.sort((a, b) => a - b), `rep ${rep}: parent input_finished`).toEqual(inbox.map((input) => input.seq).sort((a, b) => a - b));
      const startedEvents = parentEvents.filter((event) => event.type === 'subagent_started').map((event) => String(event.data.childSessionId));
      expect(new Set(startedEvents).size, `rep ${rep}: subagent_started published once per child (${startedEvents.join(', ')})`).toBe(startedEvents.length);
      expect(startedEvents).toContain(String(firstSpawn.data.childSessionId));
      const hostFinish = parentEvents.find((event) => event.type === 'input_finished' && event.data.inputSeq === 1);
      expect(hostFinish?.data).toMatchObject({ status: 'completed', finalText: `Done: Echo: ${tasks[0]} | Echo: ${tasks[1]}` });
      const resumedBy = async (sessionId: string) => (await events(sessionId)).filter((event) => event.type === 'input_resumed').map((event) => String(event.data.reason));
      log.push(`rep ${rep}: parent resumed [${(await resumedBy(parent)).join(', ')}]; ${victim.child} resumed [${(await resumedBy(victim.child)).join(', ')}]`);
    }
    console.info(`kill-children (seed ${seed}): ${REPS} repetitions in ${Date.now() - started} ms; ${fleet.processes.all.length} processes started\n${log.join('\n')}`);
  }, 120_000);
});
