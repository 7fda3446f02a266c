/** Prints benchmark rows as an aligned table; every figure sits next to its same-run baseline. */
export type Row = Readonly<{ name: string; value: number; unit: string; baseline?: { name: string; value: number } }>;

const format = (value: number): string =>
  value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(value >= 10 ? 1 : 2);

export const printTable = (title: string, rows: readonly Row[]): void => {
  const lines = rows.map((row) => [
    row.name,
    `${format(row.value)} ${row.unit}`,
    row.baseline ? `${((row.value / row.baseline.value) * 100).toFixed(1)}% of ${row.baseline.name}` : '',
  ]);
  const widths = [0, 1, 2].map((column) => Math.max(...lines.map((line) => line[column]!.length)));
  console.log(`\n${title}`);
  for (const line of lines)
    console.log(
      `  ${line
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('   ')
        .trimEnd()}`,
    );
};

/** Runs `work` and returns how long it took in milliseconds. */
export const timed = async (work: () => Promise<unknown> | unknown): Promise<number> => {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
};

export const perSecond = (count: number, milliseconds: number): number => (count * 1000) / milliseconds;
