import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from 'vite';

/**
 * `examples/react-chat` is built in CI (issue 35): it must type-check against the installed
 * `ai` / `@ai-sdk/react` / React types, and Vite must bundle it with the gateway URL it was given.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const example = join(root, 'examples/react-chat');
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const gatewayUrl = 'http://gateway.example.test:8181';

describe('examples/react-chat', () => {
  let outDir: string;

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'lf-react-chat-'));
  });

  afterAll(async () => {
    await rm(outDir, { recursive: true, force: true });
  });

  it('type-checks (tsc --noEmit -p examples/react-chat)', async () => {
    const run = promisify(execFile)(process.execPath, [tsc, '--noEmit', '-p', example], { cwd: root });
    await expect(run).resolves.toMatchObject({ stdout: '' });
  }, 60_000);

  it('builds with Vite, pointing the transport at <gateway>/v1/chat', async () => {
    const previous = process.env.VITE_GATEWAY_URL;
    process.env.VITE_GATEWAY_URL = gatewayUrl;
    try {
      await build({
        configFile: join(example, 'vite.config.ts'),
        logLevel: 'silent',
        build: { outDir, emptyOutDir: true },
      });
    } finally {
      if (previous === undefined) delete process.env.VITE_GATEWAY_URL;
      else process.env.VITE_GATEWAY_URL = previous;
    }
    const html = await readFile(join(outDir, 'index.html'), 'utf8');
    expect(html).toMatch(/<script type="module"[^>]* src="\/assets\/index-[\w-]+\.js"/);
    const scripts = (await readdir(join(outDir, 'assets'))).filter((name) => name.endsWith('.js'));
    expect(scripts).toHaveLength(1);
    const bundle = await readFile(join(outDir, 'assets', scripts[0]!), 'utf8');
    expect(bundle).toContain(gatewayUrl);
    expect(bundle).toContain('/v1/chat');
    // The transport's resume path (`<api>/<id>/stream`) and the history load, from the SDK and the page.
    expect(bundle).toContain('/stream');
    expect(bundle).toContain('/messages');
  }, 60_000);
});
