import { InputInvalidError } from './errors/index.js';

/**
 * Serialises a value for a `jsonb` parameter. Refuses what PostgreSQL or JSON cannot hold: values
 * `JSON.stringify` throws on (BigInt, cycles), the NUL character and unpaired UTF-16 surrogates, which
 * `jsonb` rejects.
 */
export function toJsonText(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new InputInvalidError(`${what} is not serialisable as JSON`, { cause: error });
  }
  if (text === undefined) throw new InputInvalidError(`${what} is not serialisable as JSON`);
  // The plain searches first: nearly every text has neither, and the regexes need not run.
  if (text.includes('\\u0000') && ESCAPED_NUL.test(text)) throw new InputInvalidError(`${what} contains a NUL character (\\u0000), which PostgreSQL cannot store`);
  if (text.includes('\\ud') && ESCAPED_LONE_SURROGATE.test(text)) {
    throw new InputInvalidError(`${what} contains an unpaired UTF-16 surrogate (half of a character), which PostgreSQL cannot store`);
  }
  return text;
}

/** `\u0000` as JSON.stringify writes it, not preceded by an escaping backslash. */
const ESCAPED_NUL = /(?<!\\)(?:\\\\)*\\u0000/;

/** A lone surrogate as JSON.stringify writes it (`\ud800`; a well-formed pair is written as itself). */
const ESCAPED_LONE_SURROGATE = /(?<!\\)(?:\\\\)*\\ud[89a-f][0-9a-f]{2}/;
