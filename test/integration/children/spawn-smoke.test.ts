/**
 * Child sessions end to end on one in-process worker (docs/child-sessions.md): a `lead` agent's
 * reply asks for two `reader` children in one round through the real OpenAI SDK against the fleet's
 * model server; both run, the parent parks and runs on once, with both results in call order.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import type { RunningWorker } from '../../../src/worker/start-worker.js';
import { ProcessFleet } from '../fleet/fixtures/process-fleet.js';
import { sessionEvents } from '../fleet/fixtures/fleet-helpers.js';

const spawnTag = (task: string, extra = '') => `[tool:spawn_agent {"agent":"reader","task":"${task}"${extra}}]`;

describe('child sessions on one worker', () => {
  let pf: ProcessFleet;
  let worker: RunningWorker;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loopfleet-children-'));
    const file = join(dir, 'agents.json');
    await writeFile(file, JSON.stringify([{ name: 'lead', subagents: ['reader'] }, { name: 'reader' }]));
    pf = await ProcessFleet.create('children_smoke', { LOOPFLEET_AGENTS: file });
    worker = await pf.fleet.startWorker({ healthServer: true });
  }, 60_000);

  afterAll(async () => {
    await pf?.close();
  });

  it('two children in one round: both run, the parent continues once with both results in call order', async () => {
    const { fleet } = pf;
    await fleet.store.createSession({ id: 'lead-1', agent: 'lead' });
    await acceptAndKick(fleet.acceptDeps, { sessionId: 'lead-1', kind: 'send', payload: { input: `${spawnTag('read A')} ${spawnTag('read B')}` } });
    const [input] = await fleet.waitForSessionFinished('lead-1', 3);
    expect(input).toMatchObject({ seq: 1, status: 'done', result: { status: 'completed', finalText: 'Done: Echo: read A | Echo: read B', toolCalls: 2 } });
    expect(input!.result!.usage.children).toMatchObject({ llmCalls: 2 });
    const events = (await sessionEvents(fleet.redis, fleet.config.queueName, 'lead-1')).map((event) => Object.assign({ type: event.type }, event.data));
    expect(events.filter((event) => event.type === 'subagent_started').map((event) => event.childSessionId)).toEqual(['lead-1:sub:call_1_0', 'lead-1:sub:call_1_1']);
    expect(events.filter((event) => event.type === 'subagent_finished')).toHaveLength(2);
    expect(events.filter((event) => event.type === 'input_finished' && event.inputSeq === 1)).toHaveLength(1);
    expect(events.filter((event) => event.type === 'input_resumed').map((event) => event.reason)).toContain('children_answered');
    expect((await fleet.store.listChildren('lead-1')).map((child) => [child.sessionId, child.agent, child.status])).toEqual([
      ['lead-1:sub:call_1_0', 'reader', 'completed'],
      ['lead-1:sub:call_1_1', 'reader', 'completed'],
    ]);
    // The lead's worker counts the spawns and the results it took, by the child's status.
    const metrics = await (await fetch(`http://127.0.0.1:${String(worker.healthPort)}/metrics`)).text();
    expect(metrics).toMatch(/loopfleet_subagents_total\{[^}]*agent="lead"[^}]*event="started"[^}]*\} 2\b/);
    expect(metrics).toMatch(/loopfleet_subagents_total\{[^}]*agent="lead"[^}]*event="finished"[^}]*status="completed"[^}]*\} 2\b/);
  }, 60_000);
});
