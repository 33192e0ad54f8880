/**
 * Node 22 from the npm registry (`node` package in bench/peers/package.json), for a peer whose current
 * version needs it. loopfleet itself runs on the harness's Node (20).
 */
import { fileURLToPath } from 'node:url';

export function node22(): string {
  return fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
}
