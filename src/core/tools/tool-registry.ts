import { ToolDefinitionError } from '../errors/index.js';
import { createSchemaCompiler } from './schema-compiler.js';
import type { AnyToolDefinition, RegisteredTool, ToolSpec } from './tool-types.js';
import { validateToolDefinition } from './validate-definition.js';

/** A per-input tools allowlist: `null`/`undefined` means every registered tool. */
export type ToolAllowlist = readonly string[] | null | undefined;

/**
 * The tools a session may use, validated and compiled once at start-up. Immutable: `subset` returns a
 * new registry sharing the already-compiled tools, so a per-input allowlist never changes what other
 * inputs see.
 */
export class ToolRegistry {
  readonly #tools: ReadonlyMap<string, RegisteredTool>;

  private constructor(tools: ReadonlyMap<string, RegisteredTool>) {
    this.#tools = tools;
  }

  /**
   * Validates every definition and compiles its argument schema with this registry's own compiler
   * (an ajv per JSON Schema draft, the one each schema declares in `$schema`; draft-07 by default).
   * Throws `ToolDefinitionError` (`tool.definition_invalid`) for the first bad definition or a
   * duplicate name.
   */
  static from(definitions: readonly AnyToolDefinition[]): ToolRegistry {
    if (!Array.isArray(definitions)) {
      throw new ToolDefinitionError(`tools must be an array of tool definitions, got ${definitions === null ? 'null' : typeof definitions}`);
    }
    const compiler = createSchemaCompiler();
    const tools = new Map<string, RegisteredTool>();
    const positions = new Map<string, number>();
    definitions.forEach((definition: unknown, index) => {
      const tool = validateToolDefinition(definition, { compiler, index });
      const earlier = positions.get(tool.name);
      if (earlier !== undefined) {
        throw new ToolDefinitionError(`duplicate tool name "${tool.name}" (definitions #${earlier} and #${index})`, {
          details: { tool: tool.name },
        });
      }
      positions.set(tool.name, index);
      tools.set(tool.name, tool);
    });
    return new ToolRegistry(tools);
  }

  /** The tool called `name`, or undefined. */
  get(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** Registered names, in registration order. */
  names(): string[] {
    return [...this.#tools.keys()];
  }

  /**
   * What the model is offered: the allowed tools in registration order. Names the registry does not
   * know are ignored here; callers that take an allowlist from outside check `unknownNames` first.
   */
  specs(allowlist?: ToolAllowlist): ToolSpec[] {
    return this.#select(allowlist).map((tool) => tool.spec);
  }

  /** The allowlist's names that are not registered, deduplicated, in allowlist order. */
  unknownNames(allowlist: ToolAllowlist): string[] {
    if (allowlist === null || allowlist === undefined) return [];
    return [...new Set(allowlist.filter((name) => !this.#tools.has(name)))];
  }

  /** A new registry holding only the allowed tools (unknown names ignored). This one is unchanged. */
  subset(allowlist: ToolAllowlist): ToolRegistry {
    return new ToolRegistry(new Map(this.#select(allowlist).map((tool) => [tool.name, tool])));
  }

  /**
   * A new registry with this one's tools followed by `other`'s (both already validated): an agent's
   * own tools plus those of its MCP servers. A name in both throws `tool.definition_invalid`.
   */
  with(other: ToolRegistry): ToolRegistry {
    const tools = new Map(this.#tools);
    for (const tool of other.#tools.values()) {
      if (tools.has(tool.name)) throw new ToolDefinitionError(`duplicate tool name "${tool.name}"`, { details: { tool: tool.name } });
      tools.set(tool.name, tool);
    }
    return new ToolRegistry(tools);
  }

  #select(allowlist: ToolAllowlist): RegisteredTool[] {
    const tools = [...this.#tools.values()];
    if (allowlist === null || allowlist === undefined) return tools;
    const allowed = new Set(allowlist);
    return tools.filter((tool) => allowed.has(tool.name));
  }
}
