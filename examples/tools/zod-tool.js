import { ToolInvalidArgsError } from 'loopfleet';
import { z } from 'zod';

/**
 * A loopfleet tool whose arguments are a zod schema.
 *
 * - The model is offered `z.toJSONSchema(schema)`, and the loop checks every call against it before
 *   `execute` runs: a wrong type or a missing field never reaches your code.
 * - `execute` then parses the arguments with zod itself. That applies what JSON Schema cannot say
 *   (`.trim()`, `.refine()`, defaults) and hands your function typed, cleaned values.
 * - Arguments zod refuses throw `ToolInvalidArgsError`. A failed tool is data: the loop hands the
 *   message to the model as the tool's result, so it can fix the call and try again.
 *
 * The schema is converted in `input` mode, so a field with a `.default()` is optional for the model.
 * Use `z.strictObject` so the model is told, and checked, that no other field is allowed.
 *
 * @template {z.ZodObject} S
 * @param {{
 *   name: string,
 *   description: string,
 *   schema: S,
 *   execute: (args: z.output<S>, ctx: import('loopfleet').ToolContext) => unknown,
 *   policy?: 'retry' | 'fail',
 *   concurrencySafe?: boolean,
 *   timeoutMs?: number,
 * }} definition
 * @returns {import('loopfleet').ToolDefinition}
 */
export function zodTool(definition) {
  const { name, description, schema, execute } = definition;
  return {
    name,
    description,
    parameters: z.toJSONSchema(schema, { io: 'input' }),
    policy: definition.policy,
    concurrencySafe: definition.concurrencySafe,
    timeoutMs: definition.timeoutMs,
    execute(args, ctx) {
      const parsed = schema.safeParse(args);
      if (!parsed.success) {
        throw new ToolInvalidArgsError(`invalid arguments for tool "${name}": ${issuesText(parsed.error)}`, { details: { tool: name } });
      }
      return execute(parsed.data, ctx);
    },
  };
}

/** Each problem as `<JSON pointer> <message>`, joined with `; `: the loop's own wording for schema errors. */
function issuesText(error) {
  return error.issues.map((issue) => (issue.path.length === 0 ? issue.message : `/${issue.path.join('/')} ${issue.message}`)).join('; ');
}
