import { didKey, type DidRef } from '../did/did.ts';
import { isValidName } from '../shared/names.ts';
import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';

/**
 * Traces and what they say about reads (Rucio's trace documents, `core/trace.py`, and kronos,
 * `daemons/tracer/kronos.py`). Clients post a trace for every file they download (`rucio
 * download`: eventType `download`), every file a pilot reads (`get`, `get_sm`, `sm_get`, ...) and
 * every `rucio touch`. Kronos reads them in batches and records, per batch, when each replica and
 * each dataset was last read and how often: the reaper takes the least recently read replica first.
 */

/** A read a trace reports: of a file's replicas on the RSEs it names, or of a dataset (a touch). */
export type TraceRead = Readonly<
  | { kind: 'file'; scope: string; name: string; rses: readonly string[]; at: string }
  | { kind: 'dataset'; scope: string; name: string; rses: readonly string[]; at: string }
>;

/**
 * The client states of a read that happened (a download finished, a pilot's read done). Rucio's
 * kronos counts every state, failed downloads too; a failed read is no use of the replica.
 */
const READ_STATES: ReadonlySet<string> = new Set(['DONE', 'FOUND_ROOT']);

/** The event types kronos takes: downloads, touches, and pilots' reads (not event-service ones). */
const isReadEvent = (eventType: string): boolean =>
  (eventType === 'download' ||
    eventType === 'touch' ||
    eventType.startsWith('get') ||
    eventType.startsWith('sm_get')) &&
  !eventType.endsWith('_es');

const textOf = (trace: Readonly<Record<string, unknown>>, key: string): string | undefined => {
  const value = trace[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/** The RSEs of a trace's `remoteSite` (comma-separated, as pilots send it). */
const rsesOf = (trace: Readonly<Record<string, unknown>>): string[] =>
  (textOf(trace, 'remoteSite') ?? '')
    .split(',')
    .map((rse) => rse.trim())
    .filter((rse) => isValidName('rse', rse));

/**
 * The read a trace reports, received at `at`, or undefined when it reports none: another event
 * (an upload), a read that failed, a file without the RSE it was read from, names that cannot be
 * a DID's. A `touch` names a file with its RSE, or a dataset (`datasetScope`, `dataset`).
 */
export const readOfTrace = (trace: Readonly<Record<string, unknown>>, at: string): TraceRead | undefined => {
  const eventType = textOf(trace, 'eventType');
  const clientState = textOf(trace, 'clientState');
  if (!eventType || !isReadEvent(eventType) || !clientState || !READ_STATES.has(clientState)) return undefined;
  const rses = rsesOf(trace);
  const datasetScope = textOf(trace, 'datasetScope');
  const dataset = textOf(trace, 'dataset');
  if (eventType === 'touch' && datasetScope && dataset) {
    if (!isValidName('scope', datasetScope) || !isValidName('name', dataset)) return undefined;
    return { kind: 'dataset', scope: datasetScope, name: dataset, rses: rses.slice(0, 1), at };
  }
  const scope = textOf(trace, 'scope');
  const name = textOf(trace, 'filename') ?? textOf(trace, 'name');
  if (!scope || !name || !isValidName('scope', scope) || !isValidName('name', name) || rses.length === 0)
    return undefined;
  return { kind: 'file', scope, name, rses, at };
};

/** Reads of one replica in a batch. */
export type RecordReplicaReads = WorkflowOutput<
  'RecordReplicaReads',
  { scope: string; name: string; rse: string; rseId: string; accesses: number; accessedAt: string }
>;
/** Reads of one dataset in a batch: Rucio counts one access per batch for a dataset. */
export type RecordDatasetReads = WorkflowOutput<
  'RecordDatasetReads',
  { scope: string; name: string; accesses: number; accessedAt: string }
>;
export type KronosOutput = RecordReplicaReads | RecordDatasetReads | Skipped;

export type KronosFacts = Readonly<{
  /** RSE ids by name, of the RSEs that exist. */
  rseIds: ReadonlyMap<string, string>;
  /** The datasets each traced file is in, by `scope:name`. */
  parents: ReadonlyMap<string, readonly DidRef[]>;
}>;

const latest = (a: string | undefined, b: string): string => (a !== undefined && a > b ? a : b);

/**
 * Kronos on one batch of reads: one output per replica read (how many reads, the latest), one per
 * dataset read, itself or through one of its files. A read of an RSE that does not exist is
 * skipped, as Rucio's kronos skips it.
 */
export const kronos: Workflow<readonly TraceRead[], KronosFacts, KronosOutput> = {
  name: 'kronos',
  decide(reads, { rseIds, parents }) {
    const replicas = new Map<string, RecordReplicaReads['data']>();
    const datasets = new Map<string, { scope: string; name: string; accessedAt: string }>();
    const unknownRses = new Set<string>();
    const readDataset = (scope: string, name: string, at: string) => {
      const key = didKey(scope, name);
      datasets.set(key, { scope, name, accessedAt: latest(datasets.get(key)?.accessedAt, at) });
    };
    for (const read of reads) {
      if (read.kind === 'dataset') {
        readDataset(read.scope, read.name, read.at);
        continue;
      }
      let known = false;
      for (const rse of read.rses) {
        const rseId = rseIds.get(rse);
        if (rseId === undefined) {
          unknownRses.add(rse);
          continue;
        }
        known = true;
        const key = `${didKey(read.scope, read.name)} ${rseId}`;
        const before = replicas.get(key);
        replicas.set(key, {
          scope: read.scope,
          name: read.name,
          rse,
          rseId,
          accesses: (before?.accesses ?? 0) + 1,
          accessedAt: latest(before?.accessedAt, read.at),
        });
      }
      if (known)
        for (const parent of parents.get(didKey(read.scope, read.name)) ?? [])
          readDataset(parent.scope, parent.name, read.at);
    }
    return [
      ...[...unknownRses].map((rse): Skipped => ({
        type: 'Skipped',
        data: { what: `reads on ${rse}`, reason: 'RSENotFound' },
      })),
      ...[...replicas.values()].map((data): RecordReplicaReads => ({ type: 'RecordReplicaReads', data })),
      ...[...datasets.values()].map((data): RecordDatasetReads => ({
        type: 'RecordDatasetReads',
        data: { ...data, accesses: 1 },
      })),
    ];
  },
};

/** A read as the trace buffer kept it, checked again: undefined for anything else. */
export const storedRead = (value: Readonly<Record<string, unknown>>): TraceRead | undefined => {
  const { kind, scope, name, rses, at } = value;
  if (kind !== 'file' && kind !== 'dataset') return undefined;
  if (typeof scope !== 'string' || typeof name !== 'string' || typeof at !== 'string') return undefined;
  if (!Array.isArray(rses) || !rses.every((rse): rse is string => typeof rse === 'string')) return undefined;
  return { kind, scope, name, rses, at };
};
