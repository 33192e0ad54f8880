import { afterAll } from 'vitest';

/**
 * Fails a test file that leaves a pool, connection, server or worker open. Every such thing holds a
 * TCP socket or server handle; after the file's own afterAll hooks have run (this one is registered
 * first, so it runs last), none may remain. Closing is asynchronous, so poll briefly with a deadline.
 */
const LEAKY_RESOURCES = new Set(['TCPSocketWrap', 'TCPServerWrap', 'TCPWRAP', 'PipeServerWrap']);

afterAll(async () => {
  const deadline = Date.now() + 3000;
  let open = openHandles();
  while (open.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    open = openHandles();
  }
  if (open.length > 0) {
    throw new Error(`test file left ${open.length} open handle(s): ${open.join(', ')} — close every pool, client, server and worker in afterAll`);
  }
});

function openHandles(): string[] {
  return process.getActiveResourcesInfo().filter((name) => LEAKY_RESOURCES.has(name));
}
