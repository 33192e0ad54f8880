// Imports one package entry (argv[2], e.g. `loopfleet/client`) the way an application would, and
// prints as JSON every module that loaded: the ESM URLs the loader resolved (recorded by
// record-imports-hook.mjs) and the CommonJS files in require's cache.
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = mkdtempSync(join(tmpdir(), 'loopfleet-imports-'));
const log = join(dir, 'resolved.txt');
register(new URL('./record-imports-hook.mjs', import.meta.url), { data: { log } });
const entry = await import(process.argv[2]);
const esm = readFileSync(log, 'utf8').split('\n').filter((line) => line !== '');
const cjs = Object.keys(createRequire(import.meta.url).cache).map((file) => pathToFileURL(file).href);
rmSync(dir, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ exports: Object.keys(entry).sort(), modules: [...new Set([...esm, ...cjs])] }));
