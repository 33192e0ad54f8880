import { readFileSync } from 'node:fs';

/** The installed version of a peer package (bench/peers/node_modules), whatever its `exports` allow. */
export function packageVersion(name: string): string {
  const file = new URL(`../node_modules/${name}/package.json`, import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
