import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigInvalidError, thrownText } from '../core/errors/index.js';
import { HOOK_POINTS, HookRegistry, WORKER_HOOK_POINTS, type HookHandler, type HookPoint, type RegisterOptions } from '../core/hooks/index.js';

const KNOWN_POINTS: readonly string[] = [...HOOK_POINTS, ...WORKER_HOOK_POINTS];
const DEFINITION_KEYS = new Set(['point', 'handler', 'name', 'order']);

/**
 * The worker's hooks: the default export of the `LOOPFLEET_HOOKS` module, an array of
 * `{ point, handler, name?, order? }` (`defineHook` types them), registered in array order. A module
 * that fails to load, a default export that is not an array, or a hook with an unknown point, a
 * handler that is not a function, an unknown field, a bad `order` or a repeated `name` stops start-up
 * with `config.invalid` naming the module and the hook's place in the array (I8), before any
 * connection is opened. No module: no hooks.
 */
export async function loadHooks(modulePath: string | null): Promise<HookRegistry> {
  const registry = new HookRegistry();
  if (modulePath === null) return registry;
  const refuse = (problem: string, cause?: unknown): never => {
    throw new ConfigInvalidError(`LOOPFLEET_HOOKS: ${modulePath}: ${problem}`, { cause, details: { variables: ['LOOPFLEET_HOOKS'] } });
  };
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(resolve(modulePath)).href)) as { default?: unknown };
  } catch (error) {
    return refuse(`cannot load it: ${thrownText(error) ?? 'it threw a value that is not an Error'}`, error);
  }
  if (!Array.isArray(loaded.default)) return refuse('its default export must be an array of hooks ({ point, handler, name?, order? })');
  (loaded.default as unknown[]).forEach((entry, index) => {
    try {
      const { point, handler, options } = hookDefinition(entry);
      registry.register(point, handler, options);
    } catch (error) {
      refuse(`hook #${index}: ${thrownText(error) ?? 'it threw a value that is not an Error'}`, error);
    }
  });
  return registry;
}

/** One entry of the module's array, checked: its point, its handler and the registry's options. */
function hookDefinition(entry: unknown): { point: HookPoint; handler: HookHandler<HookPoint>; options: RegisterOptions } {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new Error('must be an object { point, handler, name?, order? }');
  const fields = entry as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !DEFINITION_KEYS.has(key));
  if (unknown.length > 0) throw new Error(`unknown field(s) ${unknown.join(', ')}`);
  const { point, handler, name, order } = fields;
  if (typeof point !== 'string' || !KNOWN_POINTS.includes(point)) throw new Error(`point must be one of ${KNOWN_POINTS.join(', ')}; got ${typeof point === 'string' ? JSON.stringify(point) : typeof point}`);
  if (typeof handler !== 'function') throw new Error(`the handler of ${point} must be a function`);
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || name.length > 128)) throw new Error('name must be a non-blank string of at most 128 characters');
  if (order !== undefined && !(typeof order === 'number' && Number.isFinite(order))) throw new Error('order must be a finite number');
  return { point: point as HookPoint, handler: handler as HookHandler<HookPoint>, options: { name: name as string | undefined, order: order as number | undefined } };
}
