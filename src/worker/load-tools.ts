import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { thrownText, ToolDefinitionError } from '../core/errors/index.js';
import type { Clock } from '../core/ports/clock.js';
import type { TimerPort } from '../core/ports/timers.js';
import { currentTimeTool, requestUserInputTool, scheduleWakeupTool, ToolRegistry, type AnyToolDefinition } from '../core/tools/index.js';

/**
 * The worker's tools: the built-ins (`current_time`, `request_user_input`, and `schedule_wakeup` when
 * given the worker's timers) plus the default export of
 * the `LOOPFLEET_TOOLS` module — an array of plain tool objects (docs/agent-loop.md). A module that fails
 * to load, a default export that is not an array, or an invalid tool stops start-up with a message
 * naming the module and the problem (I8), before any connection is opened.
 */
export async function loadTools(modulePath: string | null, clock: Clock, timers?: TimerPort): Promise<ToolRegistry> {
  const builtins: AnyToolDefinition[] = [currentTimeTool(clock) as AnyToolDefinition, requestUserInputTool as AnyToolDefinition];
  if (timers !== undefined) builtins.push(scheduleWakeupTool(timers) as AnyToolDefinition);
  if (modulePath === null) return ToolRegistry.from(builtins);
  const url = pathToFileURL(resolve(modulePath)).href;
  let loaded: { default?: unknown };
  try {
    loaded = (await import(url)) as { default?: unknown };
  } catch (error) {
    throw new ToolDefinitionError(`LOOPFLEET_TOOLS: cannot load ${modulePath}: ${thrownText(error) ?? 'it threw a value that is not an Error'}`, { cause: error });
  }
  if (!Array.isArray(loaded.default)) {
    throw new ToolDefinitionError(`LOOPFLEET_TOOLS: ${modulePath} must have a default export that is an array of tools`);
  }
  const own = loaded.default as AnyToolDefinition[];
  try {
    // The module's tools on their own first, so a problem names them by their place in its array (#0
    // is its first tool), not behind the built-ins.
    const registry = ToolRegistry.from(own);
    const builtin = new Set(builtins.map((tool) => tool.name));
    const clash = registry.names().find((name) => builtin.has(name));
    if (clash !== undefined) throw new ToolDefinitionError(`tool "${clash}" has the name of a built-in tool (${[...builtin].join(', ')})`, { details: { tool: clash } });
    return ToolRegistry.from([...builtins, ...own]);
  } catch (error) {
    throw new ToolDefinitionError(`LOOPFLEET_TOOLS: ${modulePath}: ${thrownText(error) ?? 'it threw a value that is not an Error'}`, { cause: error });
  }
}
