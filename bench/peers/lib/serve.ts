/**
 * The child side of the harness's processes: `bench/lib/bench-child.ts`'s `serveBenchChild`, without
 * its import of `bench/lib/fleet.ts` (which loads most of loopfleet's src/): a peer's worker and
 * producer processes load only what their own system needs, and start in a fraction of the time.
 * Protocol: prints `{"ready":…}`, answers `{"id","request"}` lines with `{"id","reply"|"error"}`, and
 * closes the service and exits when stdin ends (or on SIGTERM/SIGINT).
 */
import { createInterface } from 'node:readline';

export function serve<Request>(service: { ready: unknown; handle(request: Request): Promise<unknown>; close(): Promise<void> }): void {
  const write = (message: object) => void process.stdout.write(`${JSON.stringify(message)}\n`);
  let closing: Promise<void> | undefined;
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
    let message: { id?: unknown; request?: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      return;
    }
    if (typeof message.id !== 'number') return;
    const id = message.id;
    service.handle(message.request as Request).then(
      (reply) => write({ id, reply }),
      (error: unknown) => write({ id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  lines.once('close', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
  write({ ready: service.ready });
}
