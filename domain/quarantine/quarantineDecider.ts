import type { Decider } from '../shared/decider.ts';
import { InvalidPath } from '../shared/errors.ts';
import type { Command } from '../shared/event.ts';
import { pathSegmentProblem } from '../shared/names.ts';
import {
  evolveQuarantine,
  initialQuarantine,
  type DarkFileOutcome,
  type Quarantine,
  type QuarantinedReplica,
  type QuarantineEvent,
} from './quarantine.ts';

export type QuarantineReplicas = Command<
  'QuarantineReplicas',
  {
    rse: string;
    rseId: string;
    replicas: readonly QuarantinedReplica[];
    /** `scope:name` of the listed DIDs that have a registered replica on the RSE: those are not dark. */
    registered: ReadonlySet<string>;
  }
>;

/** The dark reaper is done with these entries (Rucio's `delete_quarantined_replicas`); paths not in quarantine are ignored. */
export type RemoveQuarantinedReplicas = Command<
  'RemoveQuarantinedReplicas',
  {
    rse: string;
    rseId: string;
    replicas: readonly (QuarantinedReplica & { outcome: DarkFileOutcome })[];
    daemon: string;
  }
>;

export type QuarantineCommand = QuarantineReplicas | RemoveQuarantinedReplicas;

/**
 * Rucio's `add_quarantined_replicas`: entries that are registered replicas on the RSE and paths
 * already in quarantine are skipped; a path listed twice counts once. A path with a `.`, `..` or
 * empty segment is refused (InvalidPath): the dark reaper deletes below the RSE's prefix only.
 */
export const quarantineReplicas = ({ data, metadata }: QuarantineReplicas, state: Quarantine): QuarantineEvent[] => {
  for (const { path } of data.replicas) {
    const climb = pathSegmentProblem(path);
    if (climb) throw new InvalidPath(`The path '${path}' ${climb}: it would not stay below the RSE's prefix`);
  }
  const known = new Set(state.status === 'Holding' ? state.paths : []);
  const replicas: QuarantinedReplica[] = [];
  for (const replica of data.replicas) {
    if (replica.scope !== null && replica.name !== null && data.registered.has(`${replica.scope}:${replica.name}`))
      continue;
    if (known.has(replica.path)) continue;
    known.add(replica.path);
    replicas.push(replica);
  }
  if (replicas.length === 0) return [];
  return [
    {
      type: 'ReplicasQuarantined',
      data: { rse: data.rse, rseId: data.rseId, replicas, quarantinedAt: metadata.now.toISOString() },
    },
  ];
};

export const removeQuarantinedReplicas = (
  { data, metadata }: RemoveQuarantinedReplicas,
  state: Quarantine,
): QuarantineEvent[] => {
  if (state.status !== 'Holding') return [];
  const seen = new Set<string>();
  const replicas = data.replicas.filter(
    (replica) => state.paths.has(replica.path) && !seen.has(replica.path) && seen.add(replica.path),
  );
  if (replicas.length === 0) return [];
  return [
    {
      type: 'QuarantinedReplicasRemoved',
      data: { rse: data.rse, rseId: data.rseId, replicas, daemon: data.daemon, removedAt: metadata.now.toISOString() },
    },
  ];
};

export const quarantineDecider: Decider<Quarantine, QuarantineCommand, QuarantineEvent> = {
  name: 'quarantine',
  initialState: initialQuarantine,
  evolve: evolveQuarantine,
  decide: (command: QuarantineCommand, state: Quarantine): QuarantineEvent[] => {
    switch (command.type) {
      case 'QuarantineReplicas':
        return quarantineReplicas(command, state);
      case 'RemoveQuarantinedReplicas':
        return removeQuarantinedReplicas(command, state);
      default: {
        const unknown: never = command;
        throw new Error(`Unknown quarantine command ${String((unknown as QuarantineCommand).type)}`);
      }
    }
  },
};
