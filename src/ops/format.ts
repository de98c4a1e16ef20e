/** A plain text table: columns padded to their widest cell, a header and a rule. */
export function table<T extends object>(
  rows: readonly T[],
  columns: readonly (keyof T & string)[],
): string {
  const cell = (value: unknown): string => {
    if (value === undefined || value === null) return '-';
    if (value instanceof Date) return value.toISOString();
    if (typeof value === 'string') return value;
    return JSON.stringify(value);
  };
  const cells = rows.map((row) => columns.map((column) => cell(row[column])));
  const widths = columns.map((column, i) =>
    Math.max(column.length, ...cells.map((row) => row[i]?.length ?? 0)),
  );
  const line = (values: readonly string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
