import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type IFlattenedRuleSet } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The folder rules of `.dependency-cruiser.cjs` (docs/architecture.md), checked as a test as well as
 * by `npm run lint:deps`: they hold for `src`, and each of them can fail.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const config = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs')) as { forbidden: NonNullable<IFlattenedRuleSet['forbidden']>; options: ICruiseOptions };

async function violations(baseDir: string): Promise<string[]> {
  const options: ICruiseOptions = Object.assign({}, config.options, { baseDir, validate: true, ruleSet: { forbidden: config.forbidden } });
  const { output } = await cruise(['src'], options);
  if (typeof output === 'string') throw new Error('dependency-cruiser returned text, not a result');
  return output.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} -> ${violation.to}`);
}

/** A small tree that breaks every rule once. */
const BAD_TREE: Record<string, string> = {
  'src/core/uses-io.ts': "import pg from 'pg';\nimport { readFileSync } from 'node:fs';\nexport const io = [pg, readFileSync];\n",
  'src/core/uses-store.ts': "import { store } from '../store/store.js';\nexport const s = store;\n",
  'src/core/a.ts': "import { b } from './b.js';\nexport const a = (): unknown => b;\n",
  'src/core/b.ts': "import { a } from './a.js';\nexport const b = (): unknown => a;\n",
  'src/store/store.ts': 'export const store = 1;\n',
  'src/agents/agent.ts': "import { store } from '../store/store.js';\nexport const agent = store;\n",
  'src/fleet/keys.ts': "import { store } from '../store/store.js';\nexport const keys = store;\n",
  'src/worker/drain.ts': "import { add } from '../producer/add.js';\nexport const drain = add;\n",
  'src/producer/add.ts': "import { publish } from '../events/publish.js';\nimport { drain } from '../worker/drain.js';\nexport const add = [publish, drain];\n",
  'src/mcp/tools.ts': "import { drain } from '../worker/drain.js';\nexport const tools = drain;\n",
  'src/gateway/app.ts': "import { store } from '../store/store.js';\nexport const app = store;\n",
  'src/worker/serve.ts': "import { app } from '../gateway/app.js';\nexport const serve = app;\n",
  'src/events/publish.ts': "import { add } from '../producer/add.js';\nimport { gone } from './gone.js';\nexport const publish = [add, gone];\n",
};

const scratch = mkdtempSync(join(tmpdir(), 'loopfleet-folder-rules-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('folder rules', () => {
  it('hold for src', async () => {
    expect(await violations(root)).toEqual([]);
  }, 60_000);

  it('each fail on a tree that breaks them', async () => {
    for (const [path, text] of Object.entries(BAD_TREE)) {
      mkdirSync(dirname(join(scratch, path)), { recursive: true });
      writeFileSync(join(scratch, path), text);
    }
    // The packages resolve as they do in the project, so an I/O package is known as one.
    symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    writeFileSync(join(scratch, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' } }));
    const found = await violations(scratch);
    const broken = new Set(found.map((line) => line.slice(0, line.indexOf(':'))));
    expect([...broken].sort()).toEqual(config.forbidden.map((rule) => rule.name).sort());
    expect(found.filter((line) => line.startsWith('core-imports-no-io: src/core/uses-io.ts -> '))).toEqual([
      expect.stringMatching(/node_modules\/pg\//),
      'core-imports-no-io: src/core/uses-io.ts -> fs',
    ]);
  }, 60_000);
});
