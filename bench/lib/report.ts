/** Prints benchmark rows as an aligned table; every figure sits next to its same-run baseline. */
export type Row = Readonly<{ name: string; value: number; unit: string; baseline?: { name: string; value: number } }>;

/** A figure as the tables print it: thousands separated from 100 on, two significant decimals below. */
export const formatNumber = (value: number): string =>
  value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(value >= 10 ? 1 : 2);

/** Prints `lines` under `title` as aligned columns (the first line may be a header); empty cells stay empty. */
export const printColumns = (title: string, lines: readonly (readonly string[])[]): void => {
  const columns = Math.max(...lines.map((line) => line.length));
  const widths = Array.from({ length: columns }, (_, column) =>
    Math.max(...lines.map((line) => (line[column] ?? '').length)),
  );
  console.log(`\n${title}`);
  for (const line of lines)
    console.log(
      `  ${widths
        .map((width, column) => (line[column] ?? '').padEnd(width))
        .join('   ')
        .trimEnd()}`,
    );
};

export const printTable = (title: string, rows: readonly Row[]): void =>
  printColumns(
    title,
    rows.map((row) => [
      row.name,
      `${formatNumber(row.value)} ${row.unit}`,
      row.baseline ? `${((row.value / row.baseline.value) * 100).toFixed(1)}% of ${row.baseline.name}` : '',
    ]),
  );

/** Runs `work` and returns how long it took in milliseconds. */
export const timed = async (work: () => Promise<unknown> | unknown): Promise<number> => {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
};

export const perSecond = (count: number, milliseconds: number): number => (count * 1000) / milliseconds;
