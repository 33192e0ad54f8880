import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolDefinitionError } from '../../../src/core/errors/index.js';
import { systemClock } from '../../../src/core/ports/clock.js';
import { loadTools } from '../../../src/worker/load-tools.js';

/** `LOOPFLEET_TOOLS` modules written to a temporary directory, each imported as the worker does. */
describe('loadTools', () => {
  let dir: string;
  const module = async (name: string, source: string) => {
    const path = join(dir, `${name}.mjs`);
    await writeFile(path, source);
    return path;
  };
  const tool = (name: string, extra = '') => `{ name: '${name}', description: 'd', parameters: { type: 'object', properties: {} }, execute: () => 'ok'${extra} }`;
  const refusal = (path: string) => loadTools(path, systemClock).then(() => expect.fail('expected a refusal'), (error: unknown) => error);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loopfleet-tools-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('adds the module’s tools to the built-ins', async () => {
    const registry = await loadTools(await module('fine', `export default [${tool('search')}];`), systemClock);
    expect(registry.names()).toEqual(['current_time', 'request_user_input', 'search']);
  });

  it('names a bad tool by its place in the module’s own array, not behind the built-ins', async () => {
    const error = await refusal(await module('nameless-first', `export default [{ description: 'no name', parameters: { type: 'object' }, execute: () => 'ok' }];`));
    expect(error).toBeInstanceOf(ToolDefinitionError);
    expect((error as Error).message).toMatch(/definition #0\b/);
    const duplicate = await refusal(await module('duplicate', `export default [${tool('a')}, ${tool('a')}];`));
    expect((duplicate as Error).message).toContain('definitions #0 and #1');
  });

  it('refuses a tool that takes a built-in’s name', async () => {
    const error = await refusal(await module('clash', `export default [${tool('current_time')}];`));
    expect(error).toMatchObject({ code: 'tool.definition_invalid', message: expect.stringContaining('"current_time" has the name of a built-in tool') });
  });

  it('refuses, typed, a module that throws something other than an Error, and a definition whose property throws', async () => {
    const thrown = await refusal(await module('null-proto', 'throw Object.create(null);'));
    expect(thrown).toMatchObject({ code: 'tool.definition_invalid', message: expect.stringContaining('cannot load') });
    const getter = await refusal(await module('getter', `export default [{ get name() { throw Object.create(null); } }];`));
    expect(getter).toMatchObject({ code: 'tool.definition_invalid', message: expect.stringContaining('not an Error') });
  });
});
