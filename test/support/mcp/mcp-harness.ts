import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../../../src/core/ports/clock.js';
import { executeToolCall, ToolRegistry, type AnyToolDefinition, type ToolOutcome } from '../../../src/core/tools/index.js';
import type { McpLogger } from '../../../src/mcp/index.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** The stdio test server as a spec's `command` and `args`: node with tsx, from this repository's root. */
export const STDIO_SERVER = { command: process.execPath, args: ['--import', 'tsx', join(HERE, 'stdio-server.ts')] };

/** Where a test server writes its marks; removed by `cleanup`. */
export function stateDir(): { path: string; cleanup(): void } {
  const path = mkdtempSync(join(tmpdir(), 'loopfleet-mcp-'));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** A logger that keeps what it is told, for assertions. */
export class RecordingLogger implements McpLogger {
  readonly lines: { level: string; fields: object; message: string }[] = [];
  debug(fields: object, message: string): void {
    this.lines.push({ level: 'debug', fields, message });
  }
  info(fields: object, message: string): void {
    this.lines.push({ level: 'info', fields, message });
  }
  warn(fields: object, message: string): void {
    this.lines.push({ level: 'warn', fields, message });
  }
  warnings(): string[] {
    return this.lines.filter((line) => line.level === 'warn').map((line) => `${line.message} ${JSON.stringify(line.fields)}`);
  }
}

/** Runs one call through the loop's own executor (registry validation, timeout, failure as data). */
export function runTool(tools: readonly AnyToolDefinition[], name: string, args: Record<string, unknown> = {}, id = 'call-1', signal: AbortSignal = new AbortController().signal): Promise<ToolOutcome> {
  return executeToolCall(ToolRegistry.from(tools), { id, name, arguments: JSON.stringify(args) }, { sessionId: 's1', signal, clock: systemClock });
}

/** Polls `check` every 10 ms until it holds; throws after `timeoutMs`. For state no event announces. */
export async function pollUntil(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
