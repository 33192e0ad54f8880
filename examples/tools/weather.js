import { z } from 'zod';
import { zodTool } from './zod-tool.js';

/**
 * An example `LOOPFLEET_TOOLS` module: its default export is the array of tools.
 *
 *   LOOPFLEET_TOOLS=examples/tools/weather.js
 *
 * The weather is made up from the city's name, so the example needs no network and answers the same
 * every time. Swap the body of `execute` for a real API call; pass `ctx.signal` on to it so a cancel
 * or the tool's timeout stops the request.
 */

const WeatherArgs = z.strictObject({
  city: z.string().trim().min(1, 'name a city').max(100).describe('The city, e.g. "Paris"'),
  unit: z.enum(['celsius', 'fahrenheit']).default('celsius').describe('Temperature unit'),
});

const AlertArgs = z.strictObject({
  city: z.string().trim().min(1, 'name a city').max(100),
  message: z.string().trim().min(1).max(280).describe('What to tell the people in the city'),
});

const CONDITIONS = ['sunny', 'cloudy', 'rain', 'windy', 'snow'];

/** A number from the city's name: the same city always gets the same weather. */
function seed(city) {
  let hash = 0;
  for (const char of city.toLowerCase()) hash = (hash * 31 + char.codePointAt(0)) % 1_000_003;
  return hash;
}

export const getWeather = zodTool({
  name: 'get_weather',
  description: 'The current weather in a city.',
  schema: WeatherArgs,
  // Reading the weather changes nothing: safe to run beside other calls and to repeat after a crash.
  concurrencySafe: true,
  timeoutMs: 10_000,
  execute: ({ city, unit }) => {
    const celsius = (seed(city) % 35) - 5;
    const temperature = unit === 'celsius' ? celsius : Math.round(celsius * 1.8 + 32);
    return { city, unit, temperature, conditions: CONDITIONS[seed(city) % CONDITIONS.length] };
  },
});

export const setAlert = zodTool({
  name: 'set_alert',
  description: 'Sends a weather alert to everyone in a city. Needs approval.',
  schema: AlertArgs,
  // Sending twice would alert people twice: after a crash mid-call, tell the model instead of re-running.
  policy: 'fail',
  execute: ({ city, message }) => ({ sent: true, city, message }),
});

export default [getWeather, setAlert];
