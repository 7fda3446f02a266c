import { pfnFromProtocol } from '../rse/lfn2pfn.ts';
import { protocolsFor } from '../rse/protocolSelection.ts';
import { RucioError } from '../shared/errors.ts';
import { transfertoolFor } from './protocolPairs.ts';
import {
  refusedBeforeSources,
  selectSources,
  pathOn,
  readableReplicas,
  type CandidateReplica,
  type SelectionRequest,
  type SourceSelection,
} from './sourceSelection.ts';
import { attributeFlag, isTapeOrStaging, type Topology, type TransferRse } from './topology.ts';

/**
 * The source of a STAGEIN request (Rucio's `_create_stagein_definitions` with its strategies): the
 * file is not copied but brought online where it is, so the source and destination URLs are the
 * same, the source RSE's write URL of the file. A source qualifies when its `staging_buffer`
 * attribute names the destination (Rucio's EnforceStagingBuffer: the destination is the disk
 * buffer of that tape); a destination with `staging_required` is its own source (a pin of files it
 * holds). The expression, read availability, restriction and tape filters apply as for transfers;
 * then the higher ranking first, disk before tape, and the RSE's name.
 */
export const selectStageinSource = (
  topology: Topology,
  request: SelectionRequest,
  replicas: readonly CandidateReplica[],
): SourceSelection => {
  const refused = refusedBeforeSources(topology, request);
  if (refused) return refused;
  const dest = topology.rse(request.destRseId)!;
  const candidates = [
    ...replicas.filter((replica) => replica.rseId !== dest.id),
    ...(attributeFlag(dest, 'staging_required') ? [{ rseId: dest.id, path: null }] : []),
  ];
  const readable = readableReplicas(topology, request, candidates);
  const dropped = [...readable.dropped];
  let droppedForTape = false;
  const rankings = new Map(request.rankings.map((source) => [source.rseId, source.ranking]));
  const kept = readable.kept.filter(({ rse }) => {
    if (rse.attributes.staging_buffer !== dest.rse) {
      dropped.push(`${rse.rse} (its staging_buffer is not ${dest.rse})`);
      return false;
    }
    if (!request.allowTapeSource && isTapeOrStaging(rse)) {
      droppedForTape = true;
      dropped.push(`${rse.rse} (tape)`);
      return false;
    }
    return true;
  });
  const cost = (rse: TransferRse): [number, number] => {
    const tape = isTapeOrStaging(rse) ? 1 : 0;
    return [-(rankings.get(rse.id) ?? 0) + tape, tape];
  };
  kept.sort((a, b) => {
    const [costA, costB] = [cost(a.rse), cost(b.rse)];
    return costA[0] - costB[0] || costA[1] - costB[1] || (a.rse.rse < b.rse.rse ? -1 : a.rse.rse > b.rse.rse ? 1 : 0);
  });
  for (const { rse, replica } of kept) {
    const path = pathOn(topology, rse, request, replica.path);
    const protocol = writeProtocol(rse);
    if (path === undefined || !protocol) {
      dropped.push(`${rse.rse} (no write protocol to name the file by)`);
      continue;
    }
    const url = pfnFromProtocol(protocol, path);
    return {
      kind: 'selected',
      sources: [{ rseId: rse.id, rse: rse.rse, ranking: rankings.get(rse.id) ?? 0, pfn: url }],
      destUrl: url,
      transfertool: transfertoolFor(topology, dest, { dest: protocol, source: protocol }),
    };
  }
  const reason =
    candidates.length === 0 ? 'no AVAILABLE replica to bring online' : `no usable source: ${dropped.join(', ')}`;
  return { kind: 'unavailable', state: droppedForTape ? 'ONLY_TAPE_SOURCES' : 'NO_SOURCES', reason };
};

/** The protocol Rucio names a staged file by: the source RSE's preferred wan write protocol. */
const writeProtocol = (rse: TransferRse) => {
  try {
    return protocolsFor(rse.protocols, { operation: 'write', domain: 'wan' })[0];
  } catch (error) {
    if (error instanceof RucioError) return undefined;
    throw error;
  }
};

/** The selection for any request: STAGEIN recalls the file where it is, a transfer copies it. */
export const selectSourcesFor = (
  topology: Topology,
  request: SelectionRequest,
  replicas: readonly CandidateReplica[],
): SourceSelection =>
  request.requestType === 'STAGEIN'
    ? selectStageinSource(topology, request, replicas)
    : selectSources(topology, request, replicas);
