/**
 * Entry of the child process `startStandardOpenAiServerProcess` spawns: runs the bench's fake OpenAI
 * server (`startStandardOpenAiServer`, the same code the in-process benches use) on its own event loop,
 * as a remote model would be. Protocol (`bench-child.ts`): ready with `{"url":"http://127.0.0.1:<port>/v1"}`;
 * the one request, `"requests"`, is answered with the count of requests served so far. Options come as
 * its one JSON argument (`{"delayMs":…}`). It closes its server and exits when its stdin ends.
 */
import { serveBenchChild } from './bench-child.js';
import { startStandardOpenAiServer } from './fleet.js';

const options = JSON.parse(process.argv[2] ?? '{}') as { delayMs?: number };
const server = await startStandardOpenAiServer(options.delayMs === undefined ? {} : { delayMs: options.delayMs });
serveBenchChild<unknown>({
  ready: { url: server.url },
  handle: async (request) => {
    if (request !== 'requests') throw new Error(`unknown request ${JSON.stringify(request)}`);
    return server.requests();
  },
  close: server.close,
});
