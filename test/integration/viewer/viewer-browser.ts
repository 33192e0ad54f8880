import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); the test never downloads a browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Whether the e2e test runs: yes when the browser is there; under CI=true always, so a missing
 * browser fails the run instead of skipping it.
 */
export function browserAvailable(): boolean {
  return existsSync(CHROMIUM_PATH) || process.env.CI === 'true';
}

/** A headless Chromium with a fresh profile; `close()` removes the profile too. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'loopfleet-viewer-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 800 } });
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Where `VIEWER_SCREENSHOTS=1` puts the viewer's pictures (docs/images), or null when not asked for. */
export function screenshotDir(): string | null {
  if (process.env.VIEWER_SCREENSHOTS !== '1') return null;
  const dir = join(process.cwd(), 'docs', 'images');
  mkdirSync(dir, { recursive: true });
  return dir;
}
