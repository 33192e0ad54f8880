/**
 * A tenant cap with child sessions (docs/tenant-limits.md): children inherit their parent's tenant and
 * count against its cap while they run; a parent waiting for its children holds no lease, so a tree
 * runs under a cap of 1 without deadlock. 3 `lead` parents of a tenant capped at 1, each spawning 2
 * `reader` children, on one worker process: every input completes and the tenant never has more than
 * one session holding a live lease.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { ProcessFleet } from '../fleet/fixtures/process-fleet.js';

const PARENTS = 3;
const CHILDREN = 2;

const task = (parent: number, part: number) => `p${parent} part ${part}`;
const spawnTag = (text: string) => `[tool:spawn_agent {"agent":"reader","task":"${text}"}]`;

describe('tenant cap with child sessions', () => {
  let pf: ProcessFleet;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loopfleet-capped-tree-'));
    const file = join(dir, 'agents.json');
    await writeFile(file, JSON.stringify([{ name: 'lead', subagents: ['reader'], maxChildrenPerInput: CHILDREN }, { name: 'reader' }]));
    pf = await ProcessFleet.create('tenant_cap_children', { LOOPFLEET_AGENTS: file, WORKER_CONCURRENCY: '8' });
    await pf.fleet.pool.query(`INSERT INTO tenant_settings (tenant, max_concurrent_inputs) VALUES ('tree', 1)`);
    await pf.fleet.processes.start(pf.workerEnv);
  }, 60_000);

  afterAll(async () => {
    await pf?.close();
  });

  it(`${PARENTS} parents × ${CHILDREN} children of a tenant capped at 1: all complete, one lease at a time`, async () => {
    const { fleet } = pf;
    let sampling = true;
    let maxLeased = 0;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await fleet.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE tenant = 'tree' AND lease_expires_at > now()`);
        maxLeased = Math.max(maxLeased, rows[0]!.n);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    for (let parent = 0; parent < PARENTS; parent += 1) {
      await fleet.store.createSession({ id: `tree-${parent}`, agent: 'lead', tenant: 'tree' });
      const input = Array.from({ length: CHILDREN }, (_, part) => spawnTag(task(parent, part))).join(' ');
      await acceptAndKick(fleet.acceptDeps, { sessionId: `tree-${parent}`, kind: 'send', payload: { input } });
    }
    const parents = await fleet.waitFor(
      'every parent and child input done',
      async () => {
        const { rows } = await fleet.pool.query<{ open: number; parents: number; children: number }>(
          `SELECT count(*) FILTER (WHERE i.status IN ('pending', 'running', 'waiting'))::int AS open,
                  count(*) FILTER (WHERE s.parent_session_id IS NULL AND i.kind = 'send' AND i.status = 'done')::int AS parents,
                  count(*) FILTER (WHERE s.parent_session_id IS NOT NULL AND i.status = 'done')::int AS children
             FROM session_inputs i JOIN sessions s ON s.id = i.session_id`,
        );
        const row = rows[0]!;
        return row.open === 0 && row.parents === PARENTS && row.children === PARENTS * CHILDREN ? row : undefined;
      },
      90_000,
    );
    sampling = false;
    await sampler;
    expect(parents).toMatchObject({ parents: PARENTS, children: PARENTS * CHILDREN });
    const { rows: tenants } = await fleet.pool.query<{ tenant: string; n: number }>(`SELECT tenant, count(*)::int AS n FROM sessions GROUP BY tenant`);
    expect(tenants).toEqual([{ tenant: 'tree', n: PARENTS * (1 + CHILDREN) }]);
    const { rows: results } = await fleet.pool.query<{ status: string }>(
      `SELECT i.result->>'status' AS status FROM session_inputs i JOIN sessions s ON s.id = i.session_id WHERE s.parent_session_id IS NULL AND i.kind = 'send'`,
    );
    expect(results.map((row) => row.status)).toEqual(Array.from({ length: PARENTS }, () => 'completed'));
    expect(maxLeased).toBe(1);
  }, 120_000);
});
