import { didKey } from '../did/did.ts';
import type { ReplicaState } from '../replica/replica.ts';
import type { Random } from './random.ts';
import type { DatasetLock, RuleGrouping } from './rule.ts';
import { selectRses, type ChosenRse, type Selector } from './rseSelection.ts';

/**
 * Where a rule's locks go (Rucio's rule_grouping.py): which RSEs each file of the rule's DID is
 * locked on, and the dataset locks that keep a dataset together.
 *
 * - A file DID: its copies go where the file already is, if possible.
 * - DATASET grouping: all files of a dataset go to the same RSEs, preferring those that already
 *   hold most of the dataset's bytes (in that order).
 * - ALL grouping: every file of the DID goes to the same RSEs.
 * - NONE grouping: each file is placed on its own, preferring where it already is; no dataset locks.
 *
 * A file already holding `copies` locks of the rule (a file in two datasets of a container, or
 * one the rule already covers) gets no more.
 */

export type PlacementFile = Readonly<{
  scope: string;
  name: string;
  bytes: number;
  /** The file's replicas by RSE id. */
  replicas: Readonly<Record<string, Readonly<{ state: ReplicaState }>>>;
  /** RSE ids where this rule already locks the file. */
  lockedBy?: readonly string[];
}>;

export type PlacementDataset = Readonly<{
  scope: string;
  name: string;
  /** Closed datasets have their length and bytes fixed: dataset locks copy them. */
  closed: boolean;
  files: readonly PlacementFile[];
  /** RSE ids where the rule already holds a dataset lock on it (re-evaluation after an attach). */
  lockedOn?: readonly string[];
}>;

/** The DID under the rule: one file, or the datasets of a dataset or container (each once). */
export type RuleContent =
  | Readonly<{ kind: 'file'; file: PlacementFile }>
  | Readonly<{ kind: 'collection'; datasets: readonly PlacementDataset[] }>;

/** A lock to create: the file, the RSE, and the dataset it was placed with (for its transfer's attributes). */
export type PlannedLock = Readonly<{
  scope: string;
  name: string;
  bytes: number;
  rse: ChosenRse;
  dataset: Readonly<{ scope: string; name: string }> | null;
}>;
export type PlannedDatasetLock = Readonly<{
  scope: string;
  name: string;
  length: number | null;
  bytes: number | null;
  rse: ChosenRse;
}>;

export type Placement = Readonly<{ locks: PlannedLock[]; datasetLocks: PlannedDatasetLock[]; selector: Selector }>;

/** The dataset locks a rule records for those its placement chose (the RSE by id and name). */
export const datasetLocksOf = (planned: readonly PlannedDatasetLock[]): DatasetLock[] =>
  planned.map((lock) => ({
    scope: lock.scope,
    name: lock.name,
    rseId: lock.rse.rseId,
    rse: lock.rse.rse,
    length: lock.length,
    bytes: lock.bytes,
  }));

const usable = (state: ReplicaState): boolean => state !== 'BEING_DELETED';

/** RSE ids ordered by the bytes of `files` they hold already, most first. */
const rsesByCoverage = (files: readonly PlacementFile[]): { order: string[]; bytes: Record<string, number> } => {
  const bytes: Record<string, number> = {};
  for (const file of files) {
    for (const [rseId, replica] of Object.entries(file.replicas))
      if (usable(replica.state)) bytes[rseId] = (bytes[rseId] ?? 0) + file.bytes;
  }
  const order = Object.keys(bytes).sort((a, b) => bytes[b]! - bytes[a]! || (a < b ? -1 : 1));
  return { order, bytes };
};

const sum = (files: readonly PlacementFile[]): number => files.reduce((total, file) => total + file.bytes, 0);

export const placeRule = (
  content: RuleContent,
  grouping: RuleGrouping,
  copies: number,
  initial: Selector,
  random: Random,
): Placement => {
  let selector = initial;
  const locks: PlannedLock[] = [];
  const datasetLocks: PlannedDatasetLock[] = [];
  const lockCount = new Map<string, number>();
  const alreadyLocked = (file: PlacementFile) =>
    (lockCount.get(didKey(file.scope, file.name)) ?? 0) + (file.lockedBy?.length ?? 0);
  const lockFiles = (files: readonly PlacementFile[], rses: readonly ChosenRse[], dataset: PlacementDataset | null) => {
    for (const file of files) {
      if (alreadyLocked(file) >= copies) continue;
      const held = new Set(file.lockedBy ?? []);
      for (const rse of rses) {
        if (held.has(rse.rseId) || alreadyLocked(file) >= copies) continue;
        locks.push({
          scope: file.scope,
          name: file.name,
          bytes: file.bytes,
          rse,
          dataset: dataset ? { scope: dataset.scope, name: dataset.name } : null,
        });
        lockCount.set(didKey(file.scope, file.name), (lockCount.get(didKey(file.scope, file.name)) ?? 0) + 1);
      }
    }
  };
  const choose = (
    size: number,
    preferred: readonly string[],
    existingBytes: Record<string, number>,
    prioritize: boolean,
    count = copies,
  ) => {
    const outcome = selectRses(
      selector,
      { size, copies: count, preferred, existingBytes, prioritizeOrderOverWeight: prioritize },
      random,
    );
    selector = outcome.selector;
    return outcome.chosen;
  };
  const datasetLocksOf = (dataset: PlacementDataset, rses: readonly ChosenRse[]) => {
    const held = new Set(dataset.lockedOn ?? []);
    for (const rse of rses) {
      if (held.has(rse.rseId)) continue;
      datasetLocks.push({
        scope: dataset.scope,
        name: dataset.name,
        length: dataset.closed ? dataset.files.length : null,
        bytes: dataset.closed ? sum(dataset.files) : null,
        rse,
      });
    }
  };

  if (content.kind === 'file') {
    const file = content.file;
    const missing = copies - (file.lockedBy?.length ?? 0);
    if (missing > 0) {
      const preferred = Object.entries(file.replicas)
        .filter(([, replica]) => usable(replica.state))
        .map(([rseId]) => rseId);
      const existing = Object.fromEntries(preferred.map((rseId) => [rseId, file.bytes]));
      lockFiles(
        [file],
        choose(
          file.bytes,
          preferred.filter((rseId) => !(file.lockedBy ?? []).includes(rseId)),
          existing,
          false,
          missing,
        ),
        null,
      );
    }
    return { locks, datasetLocks, selector };
  }

  const datasets = [...content.datasets].sort((a, b) => (didKey(a.scope, a.name) < didKey(b.scope, b.name) ? -1 : 1));
  if (grouping === 'NONE') {
    for (const dataset of datasets) {
      for (const file of dataset.files) {
        const missing = copies - alreadyLocked(file);
        if (missing <= 0) continue;
        const preferred = Object.entries(file.replicas)
          .filter(([, replica]) => usable(replica.state))
          .map(([rseId]) => rseId);
        const existing = Object.fromEntries(preferred.map((rseId) => [rseId, file.bytes]));
        const blocked = file.lockedBy ?? [];
        const outcome = selectRses(
          selector,
          {
            size: file.bytes,
            copies: missing,
            preferred: preferred.filter((rseId) => !blocked.includes(rseId)),
            existingBytes: existing,
            blocklist: blocked,
          },
          random,
        );
        selector = outcome.selector;
        lockFiles([file], outcome.chosen, dataset);
      }
    }
    return { locks, datasetLocks, selector };
  }

  if (grouping === 'ALL') {
    const files = datasets.flatMap((dataset) => dataset.files);
    const held = [
      ...new Set(
        datasets.flatMap((dataset) => [
          ...(dataset.lockedOn ?? []),
          ...dataset.files.flatMap((file) => file.lockedBy ?? []),
        ]),
      ),
    ];
    const rses = held.length >= copies ? heldRses(selector, held, copies) : undefined;
    const coverage = rsesByCoverage(files);
    const chosen =
      rses ??
      choose(sum(files), [...held, ...coverage.order.filter((rseId) => !held.includes(rseId))], coverage.bytes, true);
    for (const dataset of datasets) {
      lockFiles(dataset.files, chosen, dataset);
      datasetLocksOf(dataset, chosen);
    }
    return { locks, datasetLocks, selector };
  }

  for (const dataset of datasets) {
    // A dataset the rule already holds keeps its RSEs (Rucio forgets an empty dataset's choice: we do not).
    const held = [...new Set([...(dataset.lockedOn ?? []), ...dataset.files.flatMap((file) => file.lockedBy ?? [])])];
    const coverage = rsesByCoverage(dataset.files);
    const chosen =
      held.length >= copies
        ? (heldRses(selector, held, copies) ?? choose(sum(dataset.files), held, coverage.bytes, true))
        : choose(
            sum(dataset.files),
            [...held, ...coverage.order.filter((rseId) => !held.includes(rseId))],
            coverage.bytes,
            true,
          );
    lockFiles(dataset.files, chosen, dataset);
    datasetLocksOf(dataset, chosen);
  }
  return { locks, datasetLocks, selector };
};

/** The RSEs a rule already uses for a group, when they are still candidates: new files join them. */
const heldRses = (selector: Selector, held: readonly string[], copies: number): ChosenRse[] | undefined => {
  const candidates = held
    .flatMap((rseId) => selector.candidates.filter((candidate) => candidate.rseId === rseId))
    .slice(0, copies);
  if (candidates.length < copies) return undefined;
  return candidates.map(({ rseId, rse, stagingArea, availabilityWrite }) => ({
    rseId,
    rse,
    stagingArea,
    availabilityWrite,
  }));
};
