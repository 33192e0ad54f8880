/**
 * The child entry's side of a bench child process (`bench-child.ts` has the protocol and the parent's
 * side). Imports nothing of loopfleet, so a child that needs little (a peer system's worker in
 * bench/peers) starts in a fraction of the time.
 */
import { createInterface } from 'node:readline';

/** What a child entry serves (`serveBenchChild`). */
export interface BenchChildService<Request> {
  /** Sent as the ready line: what the bench needs to use the child. */
  ready: unknown;
  /** Answers one request: its value is the reply, its rejection the request's error. */
  handle(request: Request): Promise<unknown>;
  /** Releases what the child holds (servers, connections) before it exits. */
  close(): Promise<void>;
}

/**
 * The child entry's side: prints the ready line, answers requests read on stdin, and when stdin ends
 * (or on SIGTERM/SIGINT) closes the service and exits. Call once the service is ready.
 */
export function serveBenchChild<Request>(service: BenchChildService<Request>): void {
  const write = (message: object) => void process.stdout.write(`${JSON.stringify(message)}\n`);
  let closing: Promise<void> | undefined;
  // Explicit exit: nothing the child imported may keep this process alive after the service closed.
  const shutdown = () =>
    (closing ??= service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    ));
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const message = parseLine(line);
    if (message === undefined || typeof message['id'] !== 'number') return;
    const id = message['id'];
    service.handle(message['request'] as Request).then(
      (reply) => write({ id, reply }),
      (error: unknown) => write({ id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  lines.once('close', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
  write({ ready: service.ready });
}

/** One protocol line as an object; undefined for anything else. */
export function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
