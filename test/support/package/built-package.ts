import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository root: the package `npm pack` builds. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** One file `npm pack` would put in the tarball. */
export interface PackedFile {
  path: string;
  size: number;
}

/** What `npm pack --dry-run --json` reports for the package. */
export interface PackReport {
  /** The tarball's size in bytes (gzip). */
  size: number;
  unpackedSize: number;
  files: PackedFile[];
}

/**
 * The package's file list, as `npm pack` would publish it, from the built dist/ (CI builds before
 * the tests; locally run `npm run build` first). Scripts are skipped: packing must not rebuild.
 */
export async function packReport(): Promise<PackReport> {
  requireBuild();
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PACKAGE_ROOT, maxBuffer: 64 * 1024 * 1024 });
  const [report] = JSON.parse(stdout) as PackReport[];
  if (report === undefined) throw new Error('npm pack --dry-run --json reported no package');
  return report;
}

/** Fails with what to do when dist/ is missing or predates the client entry. */
export function requireBuild(): void {
  if (!existsSync(new URL('dist/client.js', `file://${PACKAGE_ROOT}`))) {
    throw new Error('dist/ is not built: run `npm run build` before the package tests');
  }
}
