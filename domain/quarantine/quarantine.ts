import { eventTypes, type Event } from '../shared/event.ts';

/**
 * Quarantined replicas are dark files: found on an RSE's storage by a consistency check but not
 * registered in the catalogue. They are not replicas, so they have their own aggregate, one per
 * RSE (`quarantine-<RSE>`), holding the paths already in quarantine.
 */
export const quarantineStreamName = (rse: string): string => `quarantine-${rse}`;

export type QuarantinedReplica = Readonly<{
  path: string;
  scope: string | null;
  name: string | null;
  bytes: number | null;
}>;

export type ReplicasQuarantined = Event<
  'ReplicasQuarantined',
  { rse: string; rseId: string; replicas: readonly QuarantinedReplica[]; quarantinedAt: string }
>;

/**
 * What the dark reaper did with a quarantined path: its file deleted from storage (`deleted`, or
 * `not-found`, which counts as deleted), or the entry dropped because the path is a registered
 * replica after all (`registered`: the file stays).
 */
export type DarkFileOutcome = 'deleted' | 'not-found' | 'registered';

/** Entries the dark reaper is done with leave the quarantine (Rucio moves them to its history table). */
export type QuarantinedReplicasRemoved = Event<
  'QuarantinedReplicasRemoved',
  {
    rse: string;
    rseId: string;
    replicas: readonly (QuarantinedReplica & { outcome: DarkFileOutcome })[];
    daemon: string;
    removedAt: string;
  }
>;

export type QuarantineEvent = ReplicasQuarantined | QuarantinedReplicasRemoved;

export const QUARANTINE_EVENT_TYPES = eventTypes<QuarantineEvent>({
  ReplicasQuarantined: true,
  QuarantinedReplicasRemoved: true,
});

export type Quarantine = Readonly<{ status: 'Empty' }> | Readonly<{ status: 'Holding'; paths: ReadonlySet<string> }>;

export const initialQuarantine = (): Quarantine => ({ status: 'Empty' });

export const evolveQuarantine = (state: Quarantine, event: QuarantineEvent): Quarantine => {
  switch (event.type) {
    case 'ReplicasQuarantined': {
      const paths = new Set(state.status === 'Holding' ? state.paths : []);
      for (const replica of event.data.replicas) paths.add(replica.path);
      return { status: 'Holding', paths };
    }
    case 'QuarantinedReplicasRemoved': {
      if (state.status !== 'Holding') return state;
      const paths = new Set(state.paths);
      for (const replica of event.data.replicas) paths.delete(replica.path);
      return { status: 'Holding', paths };
    }
    default:
      return state;
  }
};
