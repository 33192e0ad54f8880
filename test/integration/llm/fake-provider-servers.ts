/** Both fake provider servers for one test file, for the suites that use the two SDKs together. */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../support/fake-anthropic-server.js';
import { FakeOpenAiServer } from '../../support/fake-openai-server.js';

/** The servers; `anthropic` is set once the file's `beforeAll` has run. */
export interface FakeProviderServers {
  readonly openai: FakeOpenAiServer;
  anthropic: FakeAnthropicServer;
}

/**
 * Starts both servers before the file's tests and closes them after; the OpenAI server's recorded
 * requests and unused scripts are forgotten before each test. Call at the top level of a test file.
 */
export function useFakeProviderServers(): FakeProviderServers {
  const servers = { openai: new FakeOpenAiServer() } as FakeProviderServers;
  beforeAll(async () => {
    await servers.openai.start();
    servers.anthropic = await startFakeAnthropicServer();
  });
  beforeEach(() => servers.openai.reset());
  afterAll(async () => {
    await servers.openai.close();
    await servers.anthropic.close();
  });
  return servers;
}
