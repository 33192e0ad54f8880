import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url);
const dockerfile = readFileSync(new URL('deploy/Dockerfile', root), 'utf8');
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> };

/** What the build stage copies in before `npm run build`: no Docker engine here, so read it. */
function copied(): string[] {
  const build = dockerfile.slice(0, dockerfile.indexOf('RUN npm run build'));
  return [...build.matchAll(/^COPY\s+(.+?)\s+\S+\s*$/gm)].flatMap((match) => match[1]!.split(/\s+/));
}

describe('the Dockerfile', () => {
  it('copies in every folder and config file `npm run build` reads', () => {
    const sources = copied();
    // tsc -p tsconfig.build.json (src) && vite build --config viewer/vite.config.ts (viewer)
    expect(pkg.scripts.build).toContain('tsconfig.build.json');
    expect(pkg.scripts.build).toContain('viewer/vite.config.ts');
    for (const needed of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'viewer']) expect(sources).toContain(needed);
  });
});
