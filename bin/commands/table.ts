/** Prints rows as aligned columns; the first row is the header. */
export const printTable = (rows: readonly (readonly string[])[]): void => {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows)
    console.log(
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    );
};
