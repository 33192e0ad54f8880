// A module-resolution hook (node:module `register`) that appends every URL the ESM loader resolves
// to the file named by its `data.log`, one per line, before the import goes on. Synchronous on
// purpose: every line is written before the import that needed it settles.
import { appendFileSync } from 'node:fs';

let log;

export function initialize(data) {
  log = data.log;
}

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  appendFileSync(log, `${result.url}\n`);
  return result;
}
