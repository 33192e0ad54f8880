import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, requireBuild } from '../../support/package/built-package.js';

const run = promisify(execFile);
const support = (file: string) => fileURLToPath(new URL(`../../support/package/${file}`, import.meta.url));

/**
 * A producer imports `loopfleet/client` from the built package, resolved through the package's
 * `exports` map as an application's `node_modules/loopfleet` would be, in a child process that
 * records every module that loads. The client must not pull in the LLM SDKs, the worker, the
 * gateway, the MCP client or the logger a worker uses.
 */
let app: string;

beforeAll(() => {
  requireBuild();
  app = mkdtempSync(join(tmpdir(), 'loopfleet-app-'));
  mkdirSync(join(app, 'node_modules'));
  symlinkSync(PACKAGE_ROOT, join(app, 'node_modules', 'loopfleet'), 'dir');
  // Next to the application, so `import('loopfleet/…')` resolves from its node_modules.
  for (const file of ['load-entry.mjs', 'record-imports-hook.mjs']) copyFileSync(support(file), join(app, file));
});

afterAll(() => {
  rmSync(app, { recursive: true, force: true });
});

/** Imports `entry` in a child process whose working directory is the application. */
async function load(entry: string): Promise<{ exports: string[]; modules: string[] }> {
  const { stdout } = await run(process.execPath, [join(app, 'load-entry.mjs'), entry], { cwd: app, env: { PATH: process.env.PATH } });
  return JSON.parse(stdout) as { exports: string[]; modules: string[] };
}

/** Packages and built folders a producer has no use for. */
const FORBIDDEN = [
  /\/node_modules\/openai\//,
  /\/node_modules\/@anthropic-ai\//,
  /\/node_modules\/fastify\//,
  /\/node_modules\/@fastify\//,
  /\/node_modules\/@modelcontextprotocol\//,
  /\/node_modules\/@opentelemetry\/sdk-trace-/,
  /\/node_modules\/pino\//,
  /\/node_modules\/ajv\//,
  /\/dist\/(worker|gateway|llm|mcp|cli|agents|viewer)\//,
];

describe('loopfleet/client', () => {
  it('resolves through the exports map to the built entry and exports SessionQueue and the typed errors', async () => {
    const { exports, modules } = await load('loopfleet/client');
    expect(modules.some((url) => url.endsWith('/dist/client.js'))).toBe(true);
    expect(exports).toEqual(expect.arrayContaining(['SessionQueue', 'SESSION_QUEUE_DEFAULTS', 'ResultTimeoutError', 'ConfigInvalidError', 'ERROR_CODES', 'JOB', 'eventStreamKey']));
    expect(exports).not.toContain('defineTool');
  });

  it('loads no LLM SDK, worker, gateway, MCP or logger module', async () => {
    const { modules } = await load('loopfleet/client');
    expect(modules.filter((url) => FORBIDDEN.some((pattern) => pattern.test(url)))).toEqual([]);
  });

  it('the main entry exports everything the client entry does, and the agent, tool and hook definitions', async () => {
    const client = await load('loopfleet/client');
    const main = await load('loopfleet');
    expect(main.exports).toEqual(expect.arrayContaining(client.exports));
    expect(main.exports).toEqual(expect.arrayContaining(['defineAgent', 'defineTool', 'defineHook']));
    // The recorder sees what the definitions pull in (MCP tools), so its silence above means something.
    expect(main.modules.some((url) => /\/node_modules\/@modelcontextprotocol\//.test(url))).toBe(true);
  });
});
