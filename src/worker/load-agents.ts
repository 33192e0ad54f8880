import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkAgentDefinitions, type AgentDefinition } from '../agents/index.js';
import { ConfigInvalidError, thrownText } from '../core/errors/index.js';

/**
 * The agent definitions of `LOOPFLEET_AGENTS` (docs/agents.md): a `.json` file holding the array, or an
 * ES module whose default export is it. Checked whole before the worker opens any connection; a file
 * that cannot be read or parsed, or a bad definition, throws `config.invalid` naming the file, the
 * agent and the field (I8).
 */
export async function loadAgentDefinitions(path: string): Promise<AgentDefinition[]> {
  const source = `LOOPFLEET_AGENTS (${path})`;
  const value = path.toLowerCase().endsWith('.json') ? await readJson(path, source) : await importDefault(path, source);
  return checkAgentDefinitions(value, source);
}

async function readJson(path: string, source: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(resolve(path), 'utf8');
  } catch (error) {
    throw new ConfigInvalidError(`${source}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { cause: error });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ConfigInvalidError(`${source}: not valid JSON: ${thrownText(error) ?? 'parse error'}`, { cause: error });
  }
}

async function importDefault(path: string, source: string): Promise<unknown> {
  try {
    const loaded = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown };
    return loaded.default;
  } catch (error) {
    throw new ConfigInvalidError(`${source}: cannot load the module: ${thrownText(error) ?? 'it threw a value that is not an Error'}`, { cause: error });
  }
}
