import Database from 'better-sqlite3';
import { join } from 'node:path';
import { fileFootprint, type BtreeFootprint } from './lib/sqliteFootprint.ts';
import { tempDir } from './lib/tempDir.ts';

/**
 * Raw SQLite holding the facts of bench/footprint.ts's flows as plain rows: one table per fact,
 * keyed as the queries need (primary keys as clustered WITHOUT ROWID tables, a secondary index
 * only where a query looks a fact up by another key), the columns Rucio's own tables keep for it,
 * with the same names and values as the flows send. No history, no audit, no JSON.
 */

export type RawFlow = 'registered file' | 'attach' | 'lock';

type RawTable = Readonly<{ ddl: readonly string[]; row: (index: number) => unknown[] }>;

const NOW = '2026-11-28T22:00:00.000Z';
const nameOf = (index: number): string => `file.${index}`;

const replicaRow = (rse: string, state: string) => (index: number) => [
  'bench',
  nameOf(index),
  rse,
  1_000_000,
  state,
  `/data/bench/${nameOf(index)}`,
  null,
  state === 'A' ? 0 : 1,
  NOW,
  NOW,
];

const replicasDdl = [
  `CREATE TABLE replicas (scope TEXT, name TEXT, rse TEXT, bytes INTEGER, state TEXT, path TEXT, tombstone TEXT,
     lock_cnt INTEGER, created_at TEXT, updated_at TEXT, PRIMARY KEY (scope, name, rse)) WITHOUT ROWID`,
  'CREATE INDEX replicas_rse_tombstone ON replicas (rse, tombstone)',
];

/** What each flow writes per file, table by table. */
const FLOWS: Record<RawFlow, readonly RawTable[]> = {
  'registered file': [
    {
      ddl: [
        `CREATE TABLE dids (scope TEXT, name TEXT, account TEXT, did_type TEXT, availability TEXT, bytes INTEGER,
           adler32 TEXT, created_at TEXT, updated_at TEXT, PRIMARY KEY (scope, name)) WITHOUT ROWID`,
      ],
      row: (index) => ['bench', nameOf(index), 'root', 'F', 'A', 1_000_000, '0cc737eb', NOW, NOW],
    },
    { ddl: replicasDdl, row: replicaRow('FOOT_SOURCE', 'A') },
  ],
  attach: [
    {
      ddl: [
        `CREATE TABLE contents (scope TEXT, name TEXT, child_scope TEXT, child_name TEXT, did_type TEXT,
           child_type TEXT, bytes INTEGER, adler32 TEXT, created_at TEXT,
           PRIMARY KEY (scope, name, child_scope, child_name)) WITHOUT ROWID`,
        'CREATE INDEX contents_child ON contents (child_scope, child_name)',
      ],
      row: (index) => [
        'bench',
        `dataset.${Math.floor(index / 1000)}`,
        'bench',
        nameOf(index),
        'D',
        'F',
        1_000_000,
        '0cc737eb',
        NOW,
      ],
    },
  ],
  lock: [
    {
      ddl: [
        `CREATE TABLE locks (rule_id TEXT, scope TEXT, name TEXT, rse TEXT, account TEXT, state TEXT, bytes INTEGER,
           created_at TEXT, updated_at TEXT, PRIMARY KEY (rule_id, scope, name, rse)) WITHOUT ROWID`,
        'CREATE INDEX locks_replica ON locks (scope, name, rse)',
      ],
      row: (index) => [
        '019ac3e1-5c7e-7000-8000-0123456789ab',
        'bench',
        nameOf(index),
        'FOOT_TARGET',
        'root',
        'R',
        1_000_000,
        NOW,
        NOW,
      ],
    },
    { ddl: replicasDdl, row: replicaRow('FOOT_TARGET', 'C') },
    {
      ddl: [
        `CREATE TABLE requests (id TEXT PRIMARY KEY, rule_id TEXT, scope TEXT, name TEXT, dest_rse TEXT, state TEXT,
           bytes INTEGER, adler32 TEXT, created_at TEXT, updated_at TEXT) WITHOUT ROWID`,
        'CREATE INDEX requests_state ON requests (state, dest_rse)',
        'CREATE INDEX requests_replica ON requests (scope, name, dest_rse)',
      ],
      row: (index) => [
        `019ac3e1-5c7e-7000-8000-${String(index).padStart(12, '0')}`,
        '019ac3e1-5c7e-7000-8000-0123456789ab',
        'bench',
        nameOf(index),
        'FOOT_TARGET',
        'Q',
        1_000_000,
        '0cc737eb',
        NOW,
        NOW,
      ],
    },
  ],
};

/** Each flow's facts for `files` files as raw rows, 1 000 per commit, in a file of their own; their footprint. */
export const rawFootprints = (files: number): Map<RawFlow, BtreeFootprint[]> => {
  const footprints = new Map<RawFlow, BtreeFootprint[]>();
  for (const [flow, tables] of Object.entries(FLOWS) as [RawFlow, readonly RawTable[]][]) {
    const dir = tempDir();
    try {
      const path = join(dir.path, 'raw.sqlite');
      const db = new Database(path);
      db.pragma('journal_mode = WAL');
      for (const table of tables) for (const statement of table.ddl) db.exec(statement);
      for (const table of tables) {
        const name = /CREATE TABLE (\w+)/.exec(table.ddl[0]!)![1]!;
        const width = table.row(0).length;
        const insert = db.prepare(
          `INSERT INTO ${name} VALUES (${Array.from({ length: width }, () => '?').join(', ')})`,
        );
        for (let start = 0; start < files; start += 1000)
          db.transaction(() => {
            for (let index = start; index < Math.min(files, start + 1000); index += 1) insert.run(...table.row(index));
          })();
      }
      db.close();
      footprints.set(flow, fileFootprint(path, 'raw'));
    } finally {
      dir.dispose();
    }
  }
  return footprints;
};
