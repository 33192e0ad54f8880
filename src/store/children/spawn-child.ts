import { z } from 'zod';
import type { SpawnChildParams, SpawnChildResult } from '../../core/ports/session-store.js';
import { StateCorruptError } from '../../core/errors/index.js';
import { leaseLost } from '../fencing/fence.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { validateSpawn } from './child-validation.js';
import { SPAWN_CHILD_SQL } from './spawn-child-sql.js';

const spawnRowSchema = z.object({ fenced: z.boolean(), existing: z.boolean(), siblings: z.number().int().nonnegative(), created: z.boolean() });

/**
 * Fenced by the parent's lease. Creates the child session with its first input, in one statement
 * ({@link SPAWN_CHILD_SQL}), or finds it (`existing`: the child id is derived from the call), or
 * refuses when the parent input already has `maxChildrenPerInput` children. A bad request writes
 * nothing (`validateSpawn`); a stale token is `lease.lost`.
 *
 * The limit is checked on the statement's snapshot. Spawns of one parent are therefore run one after
 * another here (`serial`): only the parent's lease holder spawns, one process, so two parallel calls
 * of a run cannot both pass a limit each saw as not yet reached.
 */
export async function spawnChild(db: Queryable, serial: KeyedSerial, params: SpawnChildParams): Promise<SpawnChildResult> {
  const spawn = validateSpawn(params);
  const answer = await serial.run(spawn.parentSessionId, async () => {
    const result = await db.query(SPAWN_CHILD_SQL, [
      spawn.parentSessionId,
      spawn.leaseToken,
      spawn.inputSeq,
      spawn.toolCallId,
      spawn.childSessionId,
      spawn.agent,
      spawn.rootSessionId,
      spawn.depth,
      spawn.wait,
      spawn.maxChildrenPerInput,
      spawn.payloadText,
    ]);
    return result.rows[0] as unknown;
  });
  if (answer === undefined) throw new StateCorruptError(`spawn of ${spawn.childSessionId} returned no row`);
  const row = parseRow(spawnRowSchema, answer, `spawn of ${spawn.childSessionId}`);
  if (!row.fenced) throw leaseLost(spawn.parentSessionId, spawn.leaseToken, 'spawnChild');
  if (row.created) return { kind: 'created', childSessionId: spawn.childSessionId };
  if (row.existing) return { kind: 'existing', childSessionId: spawn.childSessionId };
  if (row.siblings >= spawn.maxChildrenPerInput) return { kind: 'refused', reason: 'too_many_children', limit: spawn.maxChildrenPerInput };
  // Not there as the statement began, not created: a concurrent spawn of the same child won the insert.
  return { kind: 'existing', childSessionId: spawn.childSessionId };
}

/** Runs tasks with the same key one after another (in call order); tasks of different keys run freely. */
export class KeyedSerial {
  readonly #tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const current = previous.then(task, task);
    const tail = current.catch(() => undefined);
    this.#tails.set(key, tail);
    try {
      return await current;
    } finally {
      // The last task of a key removes it, so the map holds only keys with work in flight.
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
