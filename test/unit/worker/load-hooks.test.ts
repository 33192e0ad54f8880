import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../../src/core/errors/index.js';
import { loadHooks } from '../../../src/worker/load-hooks.js';

/** `LOOPFLEET_HOOKS` modules written to a temporary directory, each imported as the worker does. */
describe('loadHooks', () => {
  let dir: string;
  const module = async (name: string, source: string) => {
    const path = join(dir, `${name}.mjs`);
    await writeFile(path, source);
    return path;
  };
  const refusal = (path: string) => loadHooks(path).then(() => expect.fail('expected a refusal'), (error: unknown) => error);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loopfleet-hooks-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('no module: no hooks', async () => {
    expect((await loadHooks(null)).handles('timer.fire')).toBe(false);
  });

  it('registers the module’s hooks in array order, lower order first, loop points and timer.fire alike', async () => {
    const path = await module(
      'fine',
      `export default [
        { point: 'timer.fire', handler: (fire) => { fire.note += ' b'; } },
        { point: 'timer.fire', name: 'first', order: -1, handler: (fire) => { fire.note += ' a'; } },
        { point: 'timer.fire', handler: (fire) => { fire.note += ' c'; return 'skip'; } },
        { point: 'session.start', handler: () => undefined },
      ];`,
    );
    const hooks = await loadHooks(path);
    expect(hooks.handles('session.start')).toBe(true);
    expect(hooks.has('first')).toBe(true);
    const fire = { sessionId: 's', timerId: 't', note: 'n', dueAt: new Date(), fireCount: 1, everyMs: null, createdBy: 'host' as const, postponeMs: 0, signal: new AbortController().signal };
    expect(await hooks.run('timer.fire', fire)).toBe('skip');
    expect(fire.note).toBe('n a b c');
  });

  it.each([
    ['a default export that is not an array', 'export default { point: "timer.fire" };', /its default export must be an array of hooks/],
    ['an unknown point', 'export default [{ point: "timer.fired", handler: () => {} }];', /hook #0: point must be one of session\.start, .*timer\.fire; got "timer\.fired"/],
    ['a point that is not a string', 'export default [{ point: 10n, handler: () => {} }];', /hook #0: point must be one of .*; got bigint$/],
    ['a handler that is not a function', 'export default [{ point: "round.start", handler: () => {} }, { point: "round.end", handler: "log" }];', /hook #1: the handler of round\.end must be a function/],
    ['an unknown field', 'export default [{ point: "round.end", handler: () => {}, once: true }];', /hook #0: unknown field\(s\) once/],
    ['a repeated name', 'export default [{ point: "round.end", name: "x", handler: () => {} }, { point: "round.start", name: "x", handler: () => {} }];', /hook #1: a hook named "x" is already registered/],
    ['an order that is not a number', 'export default [{ point: "round.end", order: "1", handler: () => {} }];', /hook #0: order must be a finite number/],
    ['an entry that is not an object', 'export default [null];', /hook #0: must be an object/],
    ['a module that throws while loading', 'throw new Error("hooks exploded");', /cannot load it: hooks exploded/],
  ])('refuses %s with config.invalid naming the module and the hook', async (_label, source, message) => {
    const path = await module(`bad-${String(Math.random()).slice(2)}`, source);
    const error = await refusal(path);
    expect(error).toBeInstanceOf(ConfigInvalidError);
    expect(error).toMatchObject({ code: 'config.invalid', details: { variables: ['LOOPFLEET_HOOKS'] } });
    expect((error as Error).message).toContain(`LOOPFLEET_HOOKS: ${path}: `);
    expect((error as Error).message).toMatch(message);
  });

  it('refuses a module that does not exist', async () => {
    expect(await refusal(join(dir, 'missing.mjs'))).toMatchObject({ code: 'config.invalid', message: expect.stringContaining('cannot load it') });
  });
});
