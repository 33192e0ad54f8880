/**
 * Two tables' rows in one result (a claim returns the input and its session): one side's columns are
 * selected under prefixed names, and split off again before decoding.
 */

/** `expr AS "name"` (or a bare column) entries of a column list such as `SESSION_COLUMNS`. */
function entries(columns: string): { column: string; name: string }[] {
  return columns.split(',').map((entry) => {
    const match = /^\s*(\w+)(?:\s+AS\s+"([^"]+)")?\s*$/i.exec(entry);
    if (match === null) throw new Error(`column list entry not understood: ${entry}`);
    return { column: match[1]!, name: match[2] ?? match[1]! };
  });
}

/** The column list read from `alias`, each named `prefix` + its usual name. */
export function qualifiedColumns(columns: string, alias: string, prefix = ''): string {
  return entries(columns)
    .map(({ column, name }) => `${alias}.${column} AS "${prefix}${name}"`)
    .join(', ');
}
