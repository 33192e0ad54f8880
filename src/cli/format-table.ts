/** Rows under a header, each column padded to its widest cell, two spaces apart (the last column unpadded). */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
  return all.map((row) => `${row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')}\n`).join('');
}
