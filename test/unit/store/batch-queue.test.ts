import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { BatchQueue } from '../../../src/store/batching/batch-queue.js';
import { turn, until } from '../../support/event-loop-turns.js';

/** A server's error response to a statement (severity ERROR), as pg reports it. */
function serverError(message: string): pg.DatabaseError {
  const error = new pg.DatabaseError(message, 0, 'error');
  error.severity = 'ERROR';
  return error;
}

/** One `send` call of a single item, pending until the test settles it. */
interface Resend {
  item: number;
  resolve: (outcome: string) => void;
  reject: (error: unknown) => void;
}

/**
 * A `send` whose batches of several items the server refuses, and whose single items stay pending
 * until the test settles them; it counts how many run at once.
 */
function refusingSend(): { send: (items: readonly number[]) => Promise<string[]>; resends: Resend[]; running: () => number; mostAtOnce: () => number } {
  const resends: Resend[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const send = (items: readonly number[]): Promise<string[]> => {
    if (items.length > 1) return Promise.reject(serverError('deadlock detected'));
    running += 1;
    mostAtOnce = Math.max(mostAtOnce, running);
    return new Promise<string>((resolve, reject) => {
      resends.push({ item: items[0]!, resolve, reject });
    }).then(
      (outcome) => {
        running -= 1;
        return [outcome];
      },
      (error: unknown) => {
        running -= 1;
        throw error;
      },
    );
  };
  return { send, resends, running: () => running, mostAtOnce: () => mostAtOnce };
}

const everything = (waiting: readonly number[], maxSize: number) => new Set(waiting.slice(0, maxSize).map((_, index) => index));


describe('BatchQueue', () => {
  it('after a server error, sends the items again one by one, at most maxInFlight at a time, each with its own outcome', async () => {
    const fake = refusingSend();
    const queue = new BatchQueue<number, string>({ maxSize: 64, maxInFlight: 2 }, 'test', fake.send, everything);
    const items = Array.from({ length: 10 }, (_, index) => index);
    const outcomes = items.map((item) => queue.submit(item).then((value) => ({ value }), (error: unknown) => ({ error })));

    const own = serverError('check constraint violated');
    for (let settled = 0; settled < items.length; settled += 1) {
      await until(() => fake.resends.length > settled, `resend ${settled + 1} is sent`);
      for (let i = 0; i < 5; i += 1) await turn();
      // Two resends running while more wait: never more than maxInFlight at once.
      expect(fake.resends).toHaveLength(Math.min(settled + 2, items.length));
      expect(fake.running()).toBe(Math.min(2, items.length - settled));
      const resend = fake.resends[settled]!;
      if (resend.item === 3) resend.reject(own);
      else resend.resolve(`row ${resend.item}`);
    }

    const results = await Promise.all(outcomes);
    expect(fake.mostAtOnce()).toBe(2);
    expect(fake.resends.map((resend) => resend.item)).toEqual(items);
    expect(results).toEqual(items.map((item) => (item === 3 ? { error: own } : { value: `row ${item}` })));
  });

  it('with maxInFlight 1, sends the items again strictly one after another', async () => {
    const fake = refusingSend();
    const queue = new BatchQueue<number, string>({ maxSize: 64, maxInFlight: 1 }, 'test', fake.send, everything);
    const outcomes = [0, 1, 2].map((item) => queue.submit(item));
    for (let settled = 0; settled < 3; settled += 1) {
      await until(() => fake.resends.length > settled, `resend ${settled + 1} is sent`);
      for (let i = 0; i < 5; i += 1) await turn();
      expect(fake.resends).toHaveLength(settled + 1);
      fake.resends[settled]!.resolve(`row ${settled}`);
    }
    expect(await Promise.all(outcomes)).toEqual(['row 0', 'row 1', 'row 2']);
    expect(fake.mostAtOnce()).toBe(1);
  });
});
