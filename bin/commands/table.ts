/**
 * Tables for the command line: aligned columns that fit the terminal. The widest columns of text
 * are narrowed first and their cells wrapped onto more lines (at spaces, or mid-word when a word
 * is longer than its column), so nothing is lost; `wide` prints every row on one line instead.
 */
export type TableOptions = Readonly<{
  /** Columns available; default `terminalWidth()`. */
  width?: number;
  /** Every cell on one line, however wide the table gets (`--wide`). */
  wide?: boolean;
}>;

const GAP = '  ';
/** A column is not narrowed below this (nor below its widest cell, when that is narrower). */
const MIN_COLUMN = 8;

/** The terminal's width when stdout is one, else 100: what a log or a pipe is read in. */
export const terminalWidth = (output: { isTTY?: boolean; columns?: number } = process.stdout): number =>
  output.isTTY && output.columns ? output.columns : 100;

/** The table's lines; the first row is the header. */
export const formatTable = (rows: readonly (readonly string[])[], options: TableOptions = {}): string[] => {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  if (!options.wide) fit(widths, (options.width ?? terminalWidth()) - GAP.length * (widths.length - 1), rows);
  const lines: string[] = [];
  for (const row of rows) {
    const cells = row.map((cell, column) => wrap(cell, widths[column]!));
    const height = Math.max(...cells.map((cell) => cell.length));
    for (let line = 0; line < height; line += 1)
      lines.push(
        cells
          .map((cell, column) => (cell[line] ?? '').padEnd(widths[column]!))
          .join(GAP)
          .trimEnd(),
      );
  }
  return lines;
};

/** Prints rows as aligned columns that fit the terminal (`formatTable`). */
export const printTable = (rows: readonly (readonly string[])[], options: TableOptions = {}): void => {
  for (const line of formatTable(rows, options)) console.log(line);
};

/**
 * Narrows the widest columns, one character at a time, until they fit `budget` or cannot shrink:
 * first the columns of text (cells with spaces, which wrap between words) down to their longest
 * word, then down to MIN_COLUMN, then the other columns too.
 */
const fit = (widths: number[], budget: number, rows: readonly (readonly string[])[]): void => {
  const cells = (column: number) => rows.slice(1).map((row) => row[column]!);
  const text = widths.map((_, column) => cells(column).some((cell) => cell.includes(' ')));
  const longestWord = widths.map((_, column) =>
    Math.max(0, ...cells(column).flatMap((cell) => cell.split(' ').map((word) => word.length))),
  );
  const passes: ((column: number) => number | undefined)[] = [
    (column) => (text[column] ? Math.max(longestWord[column]!, MIN_COLUMN) : undefined),
    (column) => (text[column] ? MIN_COLUMN : undefined),
    () => MIN_COLUMN,
  ];
  let total = widths.reduce((sum, width) => sum + width, 0);
  for (const floorOf of passes) {
    const floors = widths.map((width, column) => Math.min(width, floorOf(column) ?? width));
    while (total > budget) {
      let widest = -1;
      for (const [column, width] of widths.entries())
        if (width > floors[column]! && (widest < 0 || width > widths[widest]!)) widest = column;
      if (widest < 0) break;
      widths[widest]! -= 1;
      total -= 1;
    }
  }
};

/** A cell's text as lines of at most `width` characters, broken at spaces where it can be. */
export const wrap = (text: string, width: number): string[] => {
  if (text.length <= width) return [text];
  const lines: string[] = [];
  let rest = text;
  while (rest.length > width) {
    const space = rest.lastIndexOf(' ', width);
    const cut = space > 0 ? space : width;
    lines.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest.length > 0) lines.push(rest);
  return lines;
};

/** A line of text wrapped to `width`, its continuation lines indented like its first. */
export const wrapLine = (text: string, options: TableOptions = {}): string[] => {
  if (options.wide) return [text];
  const indent = /^ */.exec(text)![0];
  return wrap(text.slice(indent.length), (options.width ?? terminalWidth()) - indent.length - 2).map(
    (line, index) => `${indent}${index === 0 ? '' : '  '}${line}`,
  );
};
