import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, packReport, type PackReport } from '../../support/package/built-package.js';

/**
 * What `npm pack` would publish, from the built dist/: the compiled code, the migrations `loopfleet
 * migrate` applies, README, LICENSE and CHANGELOG; no tests, benchmarks, CI scripts or TypeScript
 * sources; every source map (if one is ever shipped) resolves inside the package; and a size bound,
 * so a stray folder cannot slip into a release unnoticed.
 */
let report: PackReport;
let paths: string[];

beforeAll(async () => {
  report = await packReport();
  paths = report.files.map((file) => file.path);
}, 120_000);

/** The bounds, with room over today's ≈ 0.8 MB tarball and ≈ 3 MB unpacked. */
const MAX_TARBALL_BYTES = 2 * 1024 * 1024;
const MAX_UNPACKED_BYTES = 8 * 1024 * 1024;

describe('npm pack', () => {
  it('ships the built code, both entries, the CLI, the viewer and the migrations, with README, LICENSE and CHANGELOG', () => {
    expect(paths).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md']));
    const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; exports: Record<string, string | Record<string, string>> };
    const targets = Object.values(pkg.exports).flatMap((target) => (typeof target === 'string' ? [target] : Object.values(target)));
    for (const target of [...targets, ...Object.values(pkg.bin)]) expect(paths, target).toContain(normalize(target));
    expect(paths).toContain('dist/viewer/index.html');
    expect(paths).toContain('src/store/migrations/meta/_journal.json');
    expect(paths.filter((path) => path.endsWith('.sql')).length).toBeGreaterThan(0);
  });

  it('ships nothing else: no tests, benchmarks, CI, examples, deploy files or TypeScript sources', () => {
    const allowed = (path: string) =>
      ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(path) || path.startsWith('dist/') || path.startsWith('src/store/migrations/');
    expect(paths.filter((path) => !allowed(path))).toEqual([]);
    expect(paths.filter((path) => /(^|\/)(test|tests|bench|\.ci|__tests__)\//.test(path) || /\.test\.[jt]s$/.test(path))).toEqual([]);
    expect(paths.filter((path) => path.startsWith('src/') && /\.[cm]?tsx?$/.test(path))).toEqual([]);
  });

  it('every source map it ships resolves each of its sources to a file it ships', () => {
    const problems: string[] = [];
    for (const map of paths.filter((path) => path.endsWith('.map'))) {
      const { sources, sourceRoot = '' } = JSON.parse(readFileSync(join(PACKAGE_ROOT, map), 'utf8')) as { sources: string[]; sourceRoot?: string };
      for (const source of sources) {
        const resolved = normalize(join(dirname(map), sourceRoot, source));
        if (!paths.includes(resolved) || !existsSync(join(PACKAGE_ROOT, resolved))) problems.push(`${map}: ${source}`);
      }
    }
    expect(problems).toEqual([]);
    // The build writes none today (tsconfig.build.json), and package.json leaves stale ones out.
    expect(paths.filter((path) => path.endsWith('.map'))).toEqual([]);
  });

  it(`stays under ${MAX_TARBALL_BYTES / 1024 / 1024} MiB packed and ${MAX_UNPACKED_BYTES / 1024 / 1024} MiB unpacked`, () => {
    expect(report.size).toBeLessThan(MAX_TARBALL_BYTES);
    expect(report.unpackedSize).toBeLessThan(MAX_UNPACKED_BYTES);
  });
});
