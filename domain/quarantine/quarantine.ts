import type { Command, Event } from '../shared/event.ts';

/**
 * Quarantined replicas are dark files: found on an RSE's storage by a consistency check but not
 * registered in the catalogue. They are not replicas, so they have their own aggregate, one per
 * RSE (`quarantine-<RSE>`), holding the paths already in quarantine.
 */
export const quarantineStreamName = (rse: string): string => `quarantine-${rse}`;

export type QuarantinedReplica = Readonly<{ path: string; scope: string | null; name: string | null; bytes: number | null }>;

export type ReplicasQuarantined = Event<
  'ReplicasQuarantined',
  { rse: string; rseId: string; replicas: readonly QuarantinedReplica[]; quarantinedAt: string }
>;

export type QuarantineEvent = ReplicasQuarantined;

export const QUARANTINE_EVENT_TYPES: readonly QuarantineEvent['type'][] = ['ReplicasQuarantined'];

export type Quarantine = Readonly<{ status: 'Empty' }> | Readonly<{ status: 'Holding'; paths: ReadonlySet<string> }>;

export const initialQuarantine = (): Quarantine => ({ status: 'Empty' });

export const evolveQuarantine = (state: Quarantine, event: QuarantineEvent): Quarantine => {
  switch (event.type) {
    case 'ReplicasQuarantined': {
      const paths = new Set(state.status === 'Holding' ? state.paths : []);
      for (const replica of event.data.replicas) paths.add(replica.path);
      return { status: 'Holding', paths };
    }
    default:
      return state;
  }
};

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

export const quarantineDecider = {
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
