import { defineAgent } from 'loopfleet';

/**
 * An example `LOOPFLEET_AGENTS` module: its default export is the array of agents.
 *
 *   LOOPFLEET_AGENTS=examples/agents.js \
 *   LOOPFLEET_TOOLS=examples/tools/weather.js \
 *   LOOPFLEET_HOOKS=examples/hooks/approve-tools.js npm run fleet
 *
 * No `provider`: each agent takes `LLM_PROVIDER` — the offline `scripted` model when no key is set.
 * A session that names no agent runs on the first one.
 */
export default [
  defineAgent({
    name: 'weather',
    systemPrompt: 'You answer questions about the weather. Use get_weather; never guess.',
    // Tools of examples/tools/weather.js, and a built-in.
    tools: ['get_weather', 'set_alert', 'current_time'],
    maxRounds: 5,
    maxOutputTokens: 512,
  }),
  defineAgent({
    name: 'chat',
    systemPrompt: 'You are a friendly assistant. Be brief.',
    tools: [],
  }),
];
