/**
 * Entry of the child process `startStandardOpenAiServerProcess` spawns: runs the bench's fake OpenAI
 * server (`startStandardOpenAiServer`, the same code the in-process benches use) on its own event loop,
 * as a remote model would be. Protocol, one JSON line each on stdout:
 * - once listening: `{"url":"http://127.0.0.1:<port>/v1","pid":<pid>}`;
 * - for every `requests` line read on stdin: `{"requests":<count so far>}`.
 * Options come as one JSON argument (`{"delayMs":…}`). It closes its server and exits when its stdin
 * ends — which the parent does in `close()`, and the OS does when the parent dies however it dies
 * (a bench's time-out exits without cleanups) — or on SIGTERM/SIGINT.
 */
import { createInterface } from 'node:readline';
import { startStandardOpenAiServer } from './fleet.js';

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as { delayMs?: number };
  const server = await startStandardOpenAiServer(options.delayMs === undefined ? {} : { delayMs: options.delayMs });
  let closing: Promise<void> | undefined;
  // Explicit exit: nothing imported through fleet.ts may keep this process alive after its server closed.
  const shutdown = () => (closing ??= server.close().then(() => process.exit(0)));
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line.trim() === 'requests') process.stdout.write(`${JSON.stringify({ requests: server.requests() })}\n`);
  });
  lines.once('close', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
  process.stdout.write(`${JSON.stringify({ url: server.url, pid: process.pid })}\n`);
}

await main();
