import type { Decider } from '../shared/decider.ts';
import type { Command } from '../shared/event.ts';
import { evolveQuarantine, initialQuarantine, type Quarantine, type QuarantinedReplica, type QuarantineEvent } from './quarantine.ts';

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

/**
 * Rucio's `add_quarantined_replicas`: entries that are registered replicas on the RSE and paths
 * already in quarantine are skipped; a path listed twice counts once.
 */
export const quarantineReplicas = ({ data, metadata }: QuarantineReplicas, state: Quarantine): QuarantineEvent[] => {
  const known = new Set(state.status === 'Holding' ? state.paths : []);
  const replicas: QuarantinedReplica[] = [];
  for (const replica of data.replicas) {
    if (replica.scope !== null && replica.name !== null && data.registered.has(`${replica.scope}:${replica.name}`)) continue;
    if (known.has(replica.path)) continue;
    known.add(replica.path);
    replicas.push(replica);
  }
  if (replicas.length === 0) return [];
  return [{ type: 'ReplicasQuarantined', data: { rse: data.rse, rseId: data.rseId, replicas, quarantinedAt: metadata.now.toISOString() } }];
};

export const quarantineDecider: Decider<Quarantine, QuarantineReplicas, QuarantineEvent> = {
  name: 'quarantine',
  initialState: initialQuarantine,
  evolve: evolveQuarantine,
  decide: (command: QuarantineReplicas, state: Quarantine): QuarantineEvent[] => {
    switch (command.type) {
      case 'QuarantineReplicas':
        return quarantineReplicas(command, state);
      default: {
        const unknown: never = command.type;
        throw new Error(`Unknown quarantine command ${String(unknown)}`);
      }
    }
  },
};
