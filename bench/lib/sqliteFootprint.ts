import Database from 'better-sqlite3';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What SQLite files hold, per B-tree (each table and each index), from SQLite's `dbstat` virtual
 * table (compiled into better-sqlite3): its entries (a table's rows, an index's entries, counted
 * in its leaf and interior cells), the bytes of its pages, and the bytes of its payload (the
 * records themselves, without page headers and free space). Tables of a projection's generation
 * (`dids__g2`) are named without the generation, so two snapshots compare across a rebuild.
 */
export type BtreeFootprint = Readonly<{
  /** `<file's part>/<table>` for a table, `<file's part>/<table> [<index>]` for an index. */
  name: string;
  kind: 'table' | 'index';
  entries: number;
  pageBytes: number;
  payloadBytes: number;
}>;

export type Footprint = ReadonlyMap<string, BtreeFootprint>;

/** `dids__g2` → `dids`; the index `dids__g2__scope__did_type__name` → `scope, did_type, name`. */
const logicalTable = (table: string): string => table.replace(/__g\d+$/, '');

const indexLabel = (table: string, index: string): string => {
  if (index.startsWith('sqlite_autoindex_')) return 'primary key';
  return index.startsWith(`${table}__`) ? index.slice(table.length + 2).replaceAll('__', ', ') : index;
};

/** One SQLite file's B-trees, each as a footprint, under `part` (the file's name without `readmodels-` and `.sqlite`). */
export const fileFootprint = (path: string, part: string): BtreeFootprint[] => {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const owners = new Map(
      db
        .prepare<[], { name: string; type: string; tbl_name: string; sql: string | null }>(
          "SELECT name, type, tbl_name, sql FROM sqlite_master WHERE type IN ('table', 'index')",
        )
        .all()
        .map((row) => [row.name, row]),
    );
    const pages = db
      .prepare<[], { name: string; pagetype: string | null; cells: number; pages: number; payload: number }>(
        'SELECT name, pagetype, sum(ncell) AS cells, sum(pgsize) AS pages, sum(payload) AS payload FROM dbstat GROUP BY name, pagetype',
      )
      .all();
    const byName = new Map<
      string,
      { kind: 'table' | 'index'; entries: number; pageBytes: number; payloadBytes: number }
    >();
    for (const page of pages) {
      const owner = owners.get(page.name);
      if (!owner || (owner.name.startsWith('sqlite_') && owner.type === 'table')) continue;
      const kind = owner.type === 'index' ? 'index' : 'table';
      const table = logicalTable(owner.tbl_name);
      const name =
        kind === 'table' ? `${part}/${table}` : `${part}/${table} [${indexLabel(owner.tbl_name, owner.name)}]`;
      const totals = byName.get(name) ?? { kind, entries: 0, pageBytes: 0, payloadBytes: 0 };
      // A rowid table's rows are its leaf cells (interior cells only point); an index, and a
      // table WITHOUT ROWID (an index B-tree itself), keeps entries in both.
      const entriesInInterior = kind === 'index' || /WITHOUT ROWID/i.test(owner.sql ?? '');
      if (page.pagetype === 'leaf' || (entriesInInterior && page.pagetype === 'internal')) totals.entries += page.cells;
      totals.pageBytes += page.pages;
      totals.payloadBytes += page.payload;
      byName.set(name, totals);
    }
    return [...byName].map(([name, totals]) => ({ name, ...totals }));
  } finally {
    db.close();
  }
};

/** Every read-model file of a data directory (`readmodels.sqlite`, `readmodels-<group>.sqlite`). */
export const readModelFootprint = (dataDir: string): Footprint => {
  const footprint = new Map<string, BtreeFootprint>();
  for (const file of readdirSync(dataDir)) {
    const match = /^readmodels(?:-(.+))?\.sqlite$/.exec(file);
    if (!match) continue;
    for (const btree of fileFootprint(join(dataDir, file), match[1] ?? 'shared')) footprint.set(btree.name, btree);
  }
  return footprint;
};

/** What grew from `before` to `after`, B-tree by B-tree (those that did not change left out). */
export const footprintGrowth = (before: Footprint, after: Footprint): BtreeFootprint[] =>
  [...after.values()]
    .map((btree) => {
      const earlier = before.get(btree.name);
      return {
        ...btree,
        entries: btree.entries - (earlier?.entries ?? 0),
        pageBytes: btree.pageBytes - (earlier?.pageBytes ?? 0),
        payloadBytes: btree.payloadBytes - (earlier?.payloadBytes ?? 0),
      };
    })
    .filter((btree) => btree.entries !== 0 || btree.pageBytes !== 0);
