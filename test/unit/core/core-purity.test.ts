import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** docs/architecture.md: src/core talks to ports and imports no I/O library. */
const FORBIDDEN = ['bullmq', 'ioredis', 'pg', 'drizzle-orm', 'openai', '@anthropic-ai/sdk', 'prom-client', 'pino', 'node:net', 'node:http', 'node:https', 'node:fs', 'node:child_process'];
const CORE = fileURLToPath(new URL('../../../src/core', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function importedModules(source: string): string[] {
  const specifiers = [...source.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((match) => match[1]!);
  return specifiers.map((spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!));
}

describe('src/core purity', () => {
  it('imports no I/O library', () => {
    const offenders = sourceFiles(CORE).flatMap((file) =>
      importedModules(readFileSync(file, 'utf8'))
        .filter((module) => FORBIDDEN.includes(module))
        .map((module) => `${relative(CORE, file)} imports ${module}`),
    );
    expect(offenders).toEqual([]);
  });

  it('finds the core sources it checks', () => {
    expect(sourceFiles(CORE).length).toBeGreaterThan(3);
  });
});
