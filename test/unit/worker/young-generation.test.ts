/**
 * The young generation `loopfleet worker` reports it runs with: node's `--max-semi-space-size`, from
 * the command line or `NODE_OPTIONS`. (Its effect on CPU and peak memory is measured, not asserted:
 * bench/history/log-to-session-30.md, item 49.)
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { maxSemiSpaceMb, WORKER_NODE_FLAGS, WORKER_SEMI_SPACE_MB } from '../../../src/worker/young-generation.js';

describe('maxSemiSpaceMb', () => {
  it('is null when neither the command line nor NODE_OPTIONS sets it (V8 default)', () => {
    expect(maxSemiSpaceMb([], '')).toBeNull();
    expect(maxSemiSpaceMb(['--enable-source-maps', '--max-old-space-size=512'], '--heap-growing-percent=100')).toBeNull();
  });

  it.each([
    [['--max-semi-space-size=32'], '', 32],
    [['--max_semi_space_size=64'], '', 64],
    [['--max-semi-space-size=48', '--import', 'tsx'], '', 48],
    [[], '--enable-source-maps --max-semi-space-size=32', 32],
    [[], '  --max-semi-space-size=24  ', 24],
    [['--max-semi-space-size=16', '--max-semi-space-size=32'], '', 32],
  ])('reads %j with NODE_OPTIONS %j as %d MB', (execArgv, nodeOptions, mb) => {
    expect(maxSemiSpaceMb(execArgv, nodeOptions)).toBe(mb);
  });

  it('takes the command line over NODE_OPTIONS, as node does', () => {
    expect(maxSemiSpaceMb(['--max-semi-space-size=64'], '--max-semi-space-size=32')).toBe(64);
  });

  it('ignores a flag without a usable value and a similar flag', () => {
    expect(maxSemiSpaceMb(['--max-semi-space-size='], '--max-semi-space-size=abc')).toBeNull();
    expect(maxSemiSpaceMb(['--max-semi-space-size-x=32', '--semi-space-growth-factor=2'], '')).toBeNull();
  });

  it('is what npm run fleet and npm run worker start the worker with (the compose file: compose-file.test.ts)', () => {
    expect(WORKER_NODE_FLAGS).toEqual([`--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`]);
    const scripts = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['fleet']).toContain(`node ${WORKER_NODE_FLAGS.join(' ')} dist/cli/main.js worker`);
    expect(scripts['worker']).toBe(`node ${WORKER_NODE_FLAGS.join(' ')} dist/cli/main.js worker`);
  });
});
