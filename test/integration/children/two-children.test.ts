/**
 * Two `wait: true` children in one round (docs/child-sessions.md), twice:
 *
 * - on the scripted model (one in-process worker, `startWorker({ llm, agents })`), the first child
 *   held until the second has answered: the parent stays `waiting` with one result in, then runs on
 *   ONCE with both results in call order (not arrival order);
 * - through the real OpenAI SDK against the fleet's model server, with two workers.
 *
 * Each time: exactly one model request of the parent answers the tool results, one `input_finished`
 * for the parent input, two `subagent_started` / `subagent_finished`, and `usage.children` is the
 * sum of both children's usage.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Usage } from '../../../src/core/session-types.js';
import { picoToUsd } from '../../../src/core/pricing/index.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { sessionEvents } from '../fleet/fixtures/fleet-helpers.js';
import { ProcessFleet } from '../fleet/fixtures/process-fleet.js';
import { ChildrenFleet, spawnTag } from './fixtures/children-fixture.js';

const AGENTS = [{ name: 'lead', subagents: ['reader'] }, { name: 'reader' }];

/** The sum of the children's own usage, as `usage.children` should hold it. */
function summed(usages: Usage[]): Record<string, number> {
  const keys = ['promptTokens', 'completionTokens', 'cachedTokens', 'cacheWriteTokens', 'reasoningTokens', 'totalTokens', 'llmCalls', 'costPicoUsd'] as const;
  const sums: Record<string, number> = Object.fromEntries(keys.map((key) => [key, usages.reduce((sum, usage) => sum + usage[key], 0)]));
  sums['costUsd'] = picoToUsd(sums['costPicoUsd']!);
  // Calls of a model without a price are counted, not priced (the fake server's model has none).
  const unpriced = usages.reduce((sum, usage) => sum + (usage.unpricedCalls ?? 0), 0);
  if (unpriced > 0) sums['unpricedCalls'] = unpriced;
  return sums;
}

describe('two children in one round, scripted model, one worker', () => {
  let cf: ChildrenFleet;

  beforeAll(async () => {
    cf = await ChildrenFleet.create('children_two_scripted', AGENTS);
  });

  afterAll(async () => {
    await cf?.close();
  });

  it('waits for both, then runs on once with both results in call order', async () => {
    const parent = 'two-s';
    const first = `${parent}:sub:call_1_0`;
    const second = `${parent}:sub:call_1_1`;
    const handle = await cf.send(parent, 'lead', `${spawnTag('reader', 'hold:slow-first')} ${spawnTag('reader', 'read B')}`);

    // The second child answers first; its result is delivered, but the parent keeps waiting for the first.
    await cf.inputStatus(second, 1, 'done');
    await cf.fleet.waitFor('the second result in the parent inbox', async () =>
      (await cf.fleet.store.listInputs(parent, { limit: 10 })).some((input) => input.inputId === 'child:call_1_1') ? true : undefined,
    );
    expect((await cf.fleet.store.getInput(parent, 1))?.status).toBe('waiting');
    expect((await cf.queue.stats(parent)).status).toBe('waiting_for_children');
    expect((await cf.fleet.store.getInput(first, 1))?.status).toBe('running');
    expect(cf.model.of(parent)).toHaveLength(1);

    cf.model.gates.open('slow-first');
    const result = await handle.result({ timeoutMs: 20_000 });
    expect(result).toMatchObject({ status: 'completed', finalText: 'Done: held slow-first | Echo: read B', toolCalls: 2 });
    // One request after the results: the one whose last message is a tool result.
    expect(cf.model.of(parent).map((request) => request.lastRole)).toEqual(['user', 'tool']);

    const [one, two] = await Promise.all([cf.fleet.store.getInput(first, 1), cf.fleet.store.getInput(second, 1)]);
    expect(result.usage.children).toEqual(summed([one!.result!.usage, two!.result!.usage]));
    expect(result.usage.children?.llmCalls).toBe(2);

    await cf.fleet.waitForSessionFinished(parent, 3);
    const events = await cf.events(parent);
    expect(events.filter((event) => event.type === 'input_finished' && event.inputSeq === 1)).toHaveLength(1);
    expect(events.filter((event) => event.type === 'subagent_started').map((event) => event.childSessionId)).toEqual([first, second]);
    expect(events.filter((event) => event.type === 'subagent_finished').map((event) => event.childSessionId)).toEqual([first, second]);
    expect(events.filter((event) => event.type === 'input_resumed').map((event) => event.reason)).toEqual(['children_answered']);
    // The tool results in the parent's history, in call order.
    expect((await cf.fleet.transcript(parent)).filter((line) => line.startsWith('tool: '))).toEqual(['tool: held slow-first', 'tool: Echo: read B']);
  });
});

describe('two children in one round, OpenAI SDK against the model server, two workers', () => {
  let pf: ProcessFleet;
  let queue: SessionQueue;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loopfleet-children-'));
    const file = join(dir, 'agents.json');
    await writeFile(file, JSON.stringify(AGENTS));
    // One run at a time per worker: the parent and its two children spread over both.
    pf = await ProcessFleet.create('children_two_openai', { LOOPFLEET_AGENTS: file, WORKER_CONCURRENCY: '1' }, { replyDelayMs: 50 });
    await pf.fleet.startWorker();
    await pf.fleet.startWorker();
    queue = new SessionQueue({ databaseUrl: pf.fleet.config.databaseUrl, redisUrl: pf.fleet.config.redisUrl, queueName: pf.fleet.config.queueName });
  });

  afterAll(async () => {
    await queue?.close();
    await pf?.close();
  });

  it('both children run, the parent continues once with both results in call order', async () => {
    const parent = 'two-o';
    const tag = (task: string) => `[tool:spawn_agent {"agent":"reader","task":"${task}"}]`;
    await queue.sessions.create({ id: parent, agent: 'lead' });
    const handle = await queue.add('send', { sessionId: parent, input: `${tag('read C')} ${tag('read D')}` });
    const result = await handle.result({ timeoutMs: 30_000 });
    expect(result).toMatchObject({ status: 'completed', finalText: 'Done: Echo: read C | Echo: read D', toolCalls: 2 });

    // The parent's only request after the results: its last message the last call's result.
    const answers = pf.model.requests.filter((request) => request.lastRole === 'tool');
    expect(answers).toEqual([{ lastRole: 'tool', lastText: 'Echo: read D' }]);
    expect(pf.model.requests.filter((request) => request.lastRole === 'user' && request.lastText.includes('[tool:spawn_agent'))).toHaveLength(1);

    const children = await queue.sessions.children(parent);
    expect(children.map((child) => [child.sessionId, child.status])).toEqual([
      [`${parent}:sub:call_1_0`, 'completed'],
      [`${parent}:sub:call_1_1`, 'completed'],
    ]);
    const usages = await Promise.all(children.map(async (child) => (await pf.fleet.store.getInput(child.sessionId, 1))!.result!.usage));
    expect(result.usage.children).toEqual(summed(usages));
    expect(result.usage.children?.llmCalls).toBe(2);

    await pf.fleet.waitForSessionFinished(parent, 3);
    const events = await sessionEvents(pf.fleet.redis, pf.fleet.config.queueName, parent);
    expect(events.filter((event) => event.type === 'input_finished' && event.data.inputSeq === 1)).toHaveLength(1);
    expect(events.filter((event) => event.type === 'subagent_finished')).toHaveLength(2);
  });
});
