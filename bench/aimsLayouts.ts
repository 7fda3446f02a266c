import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Figure } from './aims.ts';
import { formatNumber, printColumns } from './lib/report.ts';

/** The projections' layouts the write flows run in: one group on one thread (as before issue 30), the groups in parallel. */
export const LAYOUTS = ['single', 'groups'] as const;
export type Layout = (typeof LAYOUTS)[number];

/** What a run of the write flows cost the server and stored, before the rebuild. */
export type Footprint = Readonly<{
  /** Events in the log. */
  events: number;
  /** CPU of the server (every thread, and its private redis-server) from its start to the rebuild. */
  cpuSeconds: number;
  /** The registration alone: its files, the server's CPU, the events it appended and the bytes they took in each store. */
  registration: Readonly<{
    files: number;
    cpuSeconds: number;
    events: number;
    eventBytes: number;
    readModelBytes: number;
  }>;
  /** Bytes of events.sqlite and of the read models' files (with their WAL files). */
  eventBytes: number;
  readModelBytes: number;
}>;

/** The sizes of a data directory's SQLite files: the event log's and the read models' (WAL included). */
export const storedBytes = (dataDir: string): { eventBytes: number; readModelBytes: number } => {
  let eventBytes = 0;
  let readModelBytes = 0;
  for (const name of readdirSync(dataDir)) {
    const bytes = statSync(join(dataDir, name)).size;
    if (name.startsWith('events.sqlite')) eventBytes += bytes;
    else if (name.startsWith('readmodels')) readModelBytes += bytes;
  }
  return { eventBytes, readModelBytes };
};

const ratio = (figure: Figure, against: Figure): string => {
  const times = figure.better === 'higher' ? figure.value / against.value : against.value / figure.value;
  return `${times.toFixed(2)}×`;
};

/**
 * Each write flow with one group and with the groups in parallel, beside raw SQLite inserting the
 * same number of rows (what a table of the events alone could take on this disk), then what each
 * layout cost per event and stored.
 */
export const printLayoutComparison = (
  byLayout: ReadonlyMap<Layout, { figures: readonly Figure[]; footprint: Footprint }>,
): void => {
  const single = byLayout.get('single')!;
  const groups = byLayout.get('groups')!;
  printColumns('Write flows: every projection in one group (one thread) against the groups in parallel, same run', [
    ['figure', 'one group', 'groups in parallel', 'groups / one', 'aim', 'met (groups)', 'baseline (same run)'],
    ...groups.figures.map((figure) => {
      const one = single.figures.find((candidate) => candidate.name === figure.name)!;
      const aim = figure.aim && 'atLeast' in figure.aim ? `≥ ${formatNumber(figure.aim.atLeast)}` : '';
      const ceiling = figure.aim && 'atMost' in figure.aim ? figure.aim.atMost : undefined;
      const met =
        figure.aim && 'atLeast' in figure.aim
          ? figure.value >= figure.aim.atLeast
          : ceiling !== undefined
            ? figure.value <= ceiling
            : undefined;
      return [
        figure.name,
        `${formatNumber(one.value)} ${one.unit}`,
        `${formatNumber(figure.value)} ${figure.unit}`,
        ratio(figure, one),
        ceiling !== undefined ? `≤ ${formatNumber(ceiling)}` : aim,
        met === undefined ? '' : met ? 'yes' : 'no',
        figure.baseline
          ? `${figure.baseline.name}: ${formatNumber(figure.baseline.value)} ${figure.baseline.unit}`
          : '',
      ];
    }),
  ]);
  printColumns('What the write flows cost and stored, up to the rebuild', [
    ['layout', 'events', 'server CPU', 'CPU per event', 'log bytes/event', 'read-model bytes/event'],
    ...LAYOUTS.map((layout) => {
      const { footprint } = byLayout.get(layout)!;
      return [
        layout,
        formatNumber(footprint.events),
        `${footprint.cpuSeconds.toFixed(1)} s`,
        `${formatNumber((footprint.cpuSeconds * 1e6) / footprint.events)} µs`,
        formatNumber(footprint.eventBytes / footprint.events),
        formatNumber(footprint.readModelBytes / footprint.events),
      ];
    }),
  ]);
  // The stores grow by pages and the WAL is checkpointed as it goes: bytes per file are a size to plan with, not an exact count.
  printColumns('A registered file (add replicas then attach), each layout', [
    ['layout', 'events per file', 'server CPU per file', 'log bytes per file', 'read-model bytes per file'],
    ...LAYOUTS.map((layout) => {
      const { registration } = byLayout.get(layout)!.footprint;
      return [
        layout,
        (registration.events / registration.files).toFixed(2),
        `${formatNumber((registration.cpuSeconds * 1e6) / registration.files)} µs`,
        formatNumber(registration.eventBytes / registration.files),
        formatNumber(registration.readModelBytes / registration.files),
      ];
    }),
  ]);
};
