import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ToolDefinitionError } from '../core/errors/index.js';
import type { Clock } from '../core/ports/clock.js';
import { currentTimeTool, requestUserInputTool, ToolRegistry, type AnyToolDefinition } from '../core/tools/index.js';

/**
 * The worker's tools: the built-ins (`current_time`, `request_user_input`) plus the default export of
 * the `LOOPFLEET_TOOLS` module — an array of plain tool objects (DESIGN.md §6). A module that fails
 * to load, a default export that is not an array, or an invalid tool stops start-up with a message
 * naming the module and the problem (I8), before any connection is opened.
 */
export async function loadTools(modulePath: string | null, clock: Clock): Promise<ToolRegistry> {
  const builtins: AnyToolDefinition[] = [currentTimeTool(clock) as AnyToolDefinition, requestUserInputTool as AnyToolDefinition];
  if (modulePath === null) return ToolRegistry.from(builtins);
  const url = pathToFileURL(resolve(modulePath)).href;
  let loaded: { default?: unknown };
  try {
    loaded = (await import(url)) as { default?: unknown };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ToolDefinitionError(`LOOPFLEET_TOOLS: cannot load ${modulePath}: ${reason}`, { cause: error });
  }
  if (!Array.isArray(loaded.default)) {
    throw new ToolDefinitionError(`LOOPFLEET_TOOLS: ${modulePath} must have a default export that is an array of tools`);
  }
  try {
    return ToolRegistry.from([...builtins, ...(loaded.default as AnyToolDefinition[])]);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ToolDefinitionError(`LOOPFLEET_TOOLS: ${modulePath}: ${reason}`, { cause: error });
  }
}
