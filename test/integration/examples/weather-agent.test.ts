/**
 * The example agents, tools and hooks (examples/agents.js, examples/tools, examples/hooks) on a real
 * worker with the offline model: the files load through the worker's own loaders, and `/tool` inputs
 * run the zod-checked tool and the approval hook end to end. The examples import `loopfleet`, which
 * resolves to this package's dist/: build first (CI does).
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptAndKick } from '../../../src/fleet/accept-input.js';
import { eventStreamKey } from '../../../src/fleet/fleet-keys.js';
import { loadAgentDefinitions } from '../../../src/worker/load-agents.js';
import { FleetFixture } from '../../support/fleet-fixture.js';
import { runCliInProcess } from '../../support/run-cli-process.js';

const example = (path: string): string => fileURLToPath(new URL(`../../../examples/${path}`, import.meta.url));
const EXAMPLE_ENV = {
  LOOPFLEET_AGENTS: example('agents.js'),
  LOOPFLEET_TOOLS: example('tools/weather.js'),
  LOOPFLEET_HOOKS: example('hooks/approve-tools.js'),
};

describe('examples: the weather agent, its tools and hooks', () => {
  let fleet: FleetFixture;

  beforeAll(async () => {
    fleet = await FleetFixture.create('examples', EXAMPLE_ENV);
    await fleet.startWorker();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  /** Sends `input` and returns the input's final text once it finished. */
  async function ask(sessionId: string, input: string): Promise<string> {
    const { seq } = await acceptAndKick(fleet.acceptDeps, { sessionId, kind: 'send', payload: { input } });
    const inputs = await fleet.waitForSessionFinished(sessionId, seq);
    const result = inputs.find((row) => row.seq === seq)!.result as { status: string; finalText: string; agent: { name: string } };
    expect(result).toMatchObject({ status: 'completed', agent: { name: 'weather' } });
    return result.finalText;
  }

  async function events(sessionId: string, type: string): Promise<Record<string, unknown>[]> {
    const entries = await fleet.redis.xrange(eventStreamKey(fleet.config.queueName, sessionId), '-', '+');
    return entries
      .filter(([, fields]) => fields[fields.indexOf('type') + 1] === type)
      .map(([, fields]) => JSON.parse(fields[fields.indexOf('data') + 1]!) as Record<string, unknown>);
  }

  it('the agents file loads through the worker loader', async () => {
    const agents = await loadAgentDefinitions(EXAMPLE_ENV.LOOPFLEET_AGENTS);
    expect(agents.map((agent) => agent.name)).toEqual(['weather', 'chat']);
    expect(agents[0]!.tools).toEqual(['get_weather', 'set_alert', 'current_time']);
  });

  it('plain text is echoed', async () => {
    expect(await ask('w-echo', 'hello')).toBe('Echo: hello');
  });

  it('/tool get_weather runs the tool; zod fills in the default unit', async () => {
    const text = await ask('w-paris', '/tool get_weather {"city":" Paris "}');
    expect(text).toBe('get_weather returned: {"city":"Paris","unit":"celsius","temperature":20,"conditions":"sunny"}');
    const [completed] = await events('w-paris', 'tool_call_completed');
    expect(completed).toMatchObject({ name: 'get_weather', failed: false, toolInput: { city: ' Paris ' } });
  });

  it('arguments that break the JSON Schema made from the zod schema never reach execute', async () => {
    const text = await ask('w-type', '/tool get_weather {"city":42,"country":"FR"}');
    expect(text).toMatch(/^get_weather returned: Error: invalid arguments for tool "get_weather": /);
    expect(text).toContain('/city must be string');
    expect(text).toContain('must NOT have additional properties (found "country")');
    expect(await events('w-type', 'tool_call_failed')).toMatchObject([{ name: 'get_weather', errorCode: 'tool.invalid_args' }]);
  });

  it("what only zod checks (a blank city after .trim()) fails with the tool's invalid-arguments message", async () => {
    const text = await ask('w-blank', '/tool get_weather {"city":"   "}');
    expect(text).toBe('get_weather returned: Error: invalid arguments for tool "get_weather": /city name a city');
    const [failed] = await events('w-blank', 'tool_call_failed');
    expect(failed).toMatchObject({ name: 'get_weather', errorCode: 'tool.invalid_args', output: 'Error: invalid arguments for tool "get_weather": /city name a city' });
  });

  it('the approval hook skips set_alert for a session without approval; an ops- session runs it', async () => {
    const refused = await ask('w-alert', '/tool set_alert {"city":"Paris","message":"storm"}');
    expect(refused).toBe('set_alert returned: Error: "set_alert" needs approval, and session w-alert does not have it. Tell the user instead.');
    expect(await events('w-alert', 'tool_call_started')).toEqual([]);

    const sent = await ask('ops-alert', '/tool set_alert {"city":"Paris","message":"storm"}');
    expect(sent).toBe('set_alert returned: {"sent":true,"city":"Paris","message":"storm"}');
  });

  it('a tool the agent does not have is refused with the ones it has', async () => {
    const text = await ask('w-unknown', '/tool teleport {}');
    expect(text).toMatch(/^teleport returned: Error: unknown tool "teleport". Available tools: /);
    expect(text).toContain('get_weather');
  });

  it("the quickstart's command: loopfleet send … --follow prints the tool's result", async () => {
    const { code, out, err } = await runCliInProcess(['send', 'weather-cli', '/tool get_weather {"city":"Paris"}', '--follow'], fleet.env);
    expect(code, err).toBe(0);
    expect(out).toContain('get_weather returned: {"city":"Paris","unit":"celsius","temperature":20,"conditions":"sunny"}');
  });
});
