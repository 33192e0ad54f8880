import { createHash } from 'node:crypto';

/**
 * The version of an agent: the first 12 hex digits of the SHA-256 of its definition as canonical JSON
 * (keys sorted at every level). Two workers with the same definition report the same version, and
 * any change to a field — a prompt, a tool, `metadata` — gives a new one. Credentials are not part of
 * it: a definition names the environment variables, never the key.
 */
export function agentVersion(definition: unknown): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex').slice(0, 12);
}

/** JSON with object keys sorted, so the same data always gives the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(item).sort()) sorted[key] = (item as Record<string, unknown>)[key];
    return sorted;
  });
}
