import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of the installed loopfleet package. Found by walking up from this module, so it is the
 * same whether the code runs from `src/` (tsx, vitest) or from `dist/` (the built CLI).
 */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'loopfleet') {
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the loopfleet package root above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/** Committed drizzle-kit migrations; shipped with the package (`files` in package.json). */
export function migrationsFolder(): string {
  return join(packageRoot(), 'src', 'store', 'migrations');
}
