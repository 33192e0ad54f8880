/**
 * Fan-out under load (docs/child-sessions.md, "Park"): 200 `lead` parents, each asking for 4 `reader`
 * children in one reply, on ONE `loopfleet worker` process with WORKER_CONCURRENCY=16. A parent that
 * waits for its children holds no worker slot — were it to, 16 parked parents would take every slot
 * and their children would never run. All 200 parents and 800 children must complete, each parent
 * with its 4 answers in call order, every input with one `input_finished`; and the parents' streams
 * must show more parents parked at one time than the worker has slots.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { sessionEvents } from '../fleet/fixtures/fleet-helpers.js';
import { ProcessFleet } from '../fleet/fixtures/process-fleet.js';

const PARENTS = 200;
const CHILDREN = 4;
const CONCURRENCY = 16;
const DEADLINE_MS = 90_000;

const task = (parent: number, part: number) => `p${parent} part ${part}`;
const spawnTag = (text: string) => `[tool:spawn_agent {"agent":"reader","task":"${text}"}]`;
const parentId = (parent: number) => `fan-${parent}`;

describe('fan-out load on one worker', () => {
  let pf: ProcessFleet;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loopfleet-fan-out-'));
    const file = join(dir, 'agents.json');
    await writeFile(file, JSON.stringify([{ name: 'lead', subagents: ['reader'], maxChildrenPerInput: CHILDREN }, { name: 'reader' }]));
    pf = await ProcessFleet.create('fan_out_load', { LOOPFLEET_AGENTS: file, WORKER_CONCURRENCY: String(CONCURRENCY), LEASE_TTL_MS: '10000' });
    await pf.fleet.processes.start(pf.workerEnv);
  }, 60_000);

  afterAll(async () => {
    await pf?.close();
  });

  it(`${PARENTS} parents × ${CHILDREN} children, WORKER_CONCURRENCY=${CONCURRENCY}: all complete, no deadlock`, async () => {
    const { fleet } = pf;
    for (let parent = 0; parent < PARENTS; parent += 1) await fleet.store.createSession({ id: parentId(parent), agent: 'lead' });
    const started = Date.now();
    for (let parent = 0; parent < PARENTS; parent += 1) {
      const input = Array.from({ length: CHILDREN }, (_, part) => spawnTag(task(parent, part))).join(' ');
      await acceptAndKick(fleet.acceptDeps, { sessionId: parentId(parent), kind: 'send', payload: { input } });
    }
    const acceptedMs = Date.now() - started;

    // Poll Postgres until every parent input and every child input ended (or the deadline).
    const counts = async () => {
      const { rows } = await fleet.pool.query<{ parents: string; children: string; open: string }>(
        `SELECT count(*) FILTER (WHERE s.parent_session_id IS NULL AND i.kind = 'send' AND i.status = 'done') AS parents,
                count(*) FILTER (WHERE s.parent_session_id IS NOT NULL AND i.status = 'done') AS children,
                count(*) FILTER (WHERE i.status IN ('pending', 'running', 'waiting')) AS open
           FROM session_inputs i JOIN sessions s ON s.id = i.session_id`,
      );
      return { parents: Number(rows[0]!.parents), children: Number(rows[0]!.children), open: Number(rows[0]!.open) };
    };
    let last = await counts();
    while (last.parents < PARENTS || last.children < PARENTS * CHILDREN || last.open > 0) {
      if (Date.now() - started > DEADLINE_MS) {
        throw new Error(`fan-out not done after ${DEADLINE_MS} ms: ${JSON.stringify(last)}\n${fleet.processes.diagnostics()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      last = await counts();
    }
    const doneMs = Date.now() - started;

    // Every parent: its input completed once with the 4 answers in call order, 4 deliveries steered into it, 4 completed children.
    const { rows: parents } = await fleet.pool.query<{ id: string; status: string; result: { status: string; finalText: string; toolCalls: number } }>(
      `SELECT s.id, i.status, i.result FROM sessions s JOIN session_inputs i ON i.session_id = s.id AND i.kind = 'send'
        WHERE s.parent_session_id IS NULL ORDER BY s.id`,
    );
    expect(parents).toHaveLength(PARENTS);
    const expectedText = new Map(
      Array.from({ length: PARENTS }, (_, parent) => [parentId(parent), `Done: ${Array.from({ length: CHILDREN }, (_, part) => `Echo: ${task(parent, part)}`).join(' | ')}`]),
    );
    for (const row of parents) {
      expect([row.id, row.status, row.result.status, row.result.finalText, row.result.toolCalls]).toEqual([row.id, 'done', 'completed', expectedText.get(row.id), CHILDREN]);
    }
    const { rows: deliveries } = await fleet.pool.query<{ session_id: string; n: string; ids: string[] }>(
      `SELECT session_id, count(*) AS n, array_agg(input_id ORDER BY input_id) AS ids FROM session_inputs
        WHERE kind = 'child' AND status = 'done' AND steered_into = 1 GROUP BY session_id`,
    );
    expect(deliveries).toHaveLength(PARENTS);
    for (const row of deliveries) expect([row.session_id, Number(row.n), row.ids]).toEqual([row.session_id, CHILDREN, Array.from({ length: CHILDREN }, (_, i) => `child:call_1_${i}`)]);
    const { rows: children } = await fleet.pool.query<{ n: string | number; completed: string | number; inputs: string | number }>(
      `SELECT count(DISTINCT s.id) AS n,
              count(*) FILTER (WHERE i.status = 'done' AND i.result->>'status' = 'completed' AND i.result->>'finalText' = 'Echo: ' || (i.payload->>'input')) AS completed,
              count(i.seq) AS inputs
         FROM sessions s JOIN session_inputs i ON i.session_id = s.id WHERE s.parent_session_id IS NOT NULL`,
    );
    const row = children[0]!;
    expect([Number(row.n), Number(row.completed), Number(row.inputs)], 'child sessions, completed ones, their inputs').toEqual([PARENTS * CHILDREN, PARENTS * CHILDREN, PARENTS * CHILDREN]);

    // The streams: one input_finished per parent input (its own and each delivery); the parks, from the
    // stream ids (ms timestamps): how many parents waited at once.
    const parks: { from: number; to: number }[] = [];
    for (let parent = 0; parent < PARENTS; parent += 1) {
      const events = await sessionEvents(fleet.redis, fleet.config.queueName, parentId(parent));
      const finished = events.filter((event) => event.type === 'input_finished').map((event) => Number(event.data.inputSeq));
      expect(finished.sort((a, b) => a - b), `${parentId(parent)} input_finished`).toEqual(Array.from({ length: CHILDREN + 1 }, (_, i) => i + 1));
      expect(events.filter((event) => event.type === 'subagent_started')).toHaveLength(CHILDREN);
      const at = (id: string) => Number(id.split('-')[0]);
      let from: number | null = null;
      for (const event of events) {
        if (event.type === 'session_ended' && event.data.status === 'waiting_for_children') from = at(event.id);
        if (event.type === 'input_resumed' && from !== null) {
          parks.push({ from, to: at(event.id) });
          from = null;
        }
      }
    }
    const edges = parks.flatMap((park) => [{ at: park.from, delta: 1 }, { at: park.to, delta: -1 }]).sort((a, b) => a.at - b.at || a.delta - b.delta);
    let parked = 0;
    let maxParked = 0;
    for (const edge of edges) {
      parked += edge.delta;
      maxParked = Math.max(maxParked, parked);
    }
    console.info(
      `fan-out load: ${PARENTS} parents × ${CHILDREN} children on one worker (concurrency ${CONCURRENCY}): accepted in ${acceptedMs} ms, all done in ${doneMs} ms; ` +
        `${parks.length} parks, at most ${maxParked} parents parked at once`,
    );
    // More parents waited at once than the worker has slots: parked parents held none.
    expect(maxParked).toBeGreaterThan(CONCURRENCY);
  }, 150_000);
});
