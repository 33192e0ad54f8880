import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The JavaScript examples (examples/agents.js, examples/tools, examples/hooks) are type-checked from
 * their JSDoc against the package's own types (`loopfleet`, from dist/: built first, as CI does), so
 * they keep up with `defineAgent`, `defineTool`, `defineHook` and the hook contexts. Running them is
 * test/integration/examples.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');

describe('examples (JavaScript)', () => {
  it('type-check (tsc -p examples/tsconfig.json)', async () => {
    const run = promisify(execFile)(process.execPath, [tsc, '-p', join(root, 'examples/tsconfig.json')], { cwd: root });
    await expect(run).resolves.toMatchObject({ stdout: '' });
  }, 60_000);
});
