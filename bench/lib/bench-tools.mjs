/**
 * The standard input's `noop` tool as a `LOOPFLEET_TOOLS` module (an ES module whose default export is
 * the tool array), for `loopfleet worker` processes compiled to `dist/`, which load plain JavaScript:
 * `benchTools()` in `fleet.ts` gives in-process workers the same array.
 */
export default [
  {
    name: 'noop',
    description: 'Does nothing and returns "ok".',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    concurrencySafe: true,
    execute: () => 'ok',
  },
];
