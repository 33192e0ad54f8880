/**
 * PostgreSQL's `text` and `jsonb` hold neither U+0000 nor a lone UTF-16 surrogate, and a model or a
 * tool may produce either: a binary tool output, a stream cut inside a surrogate pair, a provider
 * echoing bytes. Refusing such a step would fail the caller's input for what a tool or the model
 * wrote (and after the tool's effect), so the loop commits them with each replaced by U+FFFD, the
 * replacement character. A caller's own input is different: one with them is refused when it is
 * accepted (`input.invalid`, `src/core/json-text.ts`).
 */
const REPLACEMENT = '\uFFFD';

/** `text` with U+0000 and lone surrogates replaced by U+FFFD; the same string when it has none. */
export function storableText(text: string): string {
  if (!text.includes('\u0000') && text.isWellFormed()) return text;
  return text.toWellFormed().replaceAll('\u0000', REPLACEMENT);
}

/**
 * `value` with every string in it made storable ({@link storableText}), keys included. Arrays and
 * plain objects that needed a change are copied; anything that did not is returned as it is, so
 * the common case allocates nothing.
 */
export function storable<T>(value: T): T {
  return fix(value) as T;
}

function fix(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let index = 0; index < value.length; index += 1) {
      const item: unknown = value[index];
      const fixed = fix(item);
      if (fixed !== item) (copy ??= [...value])[index] = fixed;
    }
    return copy ?? value;
  }
  if (value === null || typeof value !== 'object') return value;
  const prototype: unknown = Object.getPrototypeOf(value);
  // Plain data only (parsed JSON, literals): a Date or a class instance is the store's to encode.
  if (prototype !== Object.prototype && prototype !== null) return value;
  const record = value as Record<string, unknown>;
  let copy: Record<string, unknown> | null = null;
  // for…in over a plain object's own keys: no entries array per object on every step.
  for (const key in record) {
    const item = record[key];
    const fixedKey = storableText(key);
    const fixed = fix(item);
    if (fixed === item && fixedKey === key) continue;
    // A spread and defineProperty copy every key as data: assignment would turn an own `__proto__`
    // key (JSON.parse makes one) into the copy's prototype.
    copy ??= { ...record };
    if (fixedKey !== key) delete copy[key];
    Object.defineProperty(copy, fixedKey, { value: fixed, writable: true, enumerable: true, configurable: true });
  }
  return copy ?? value;
}
