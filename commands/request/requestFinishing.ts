import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { didKey, didStreamName } from '../../domain/did/did.ts';
import type { FileReplicas } from '../../domain/replica/replica.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import type { FinisherOutput } from '../../domain/request/finisher.ts';
import { requestIn, type ActiveRequest, type RequestBatch } from '../../domain/request/requestBatch.ts';
import { requestDecider, type RequestCommand } from '../../domain/request/requestDecider.ts';
import { retryRecord } from '../../domain/request/retries.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadConfig } from '../config/configCommands.ts';
import { loadFileReplicas } from '../did/didStreams.ts';
import {
  handleCommands,
  lastPosition,
  onStream,
  type AnyStreamDecision,
  type CommandContext,
  type DecidedStates,
} from '../handleCommand.ts';
import { changeReplicaStates } from '../rule/ruleTransfers.ts';
import { loadRequestBatch, type RequestStreams } from './conveyorSteps.ts';

/**
 * The finisher's effects (Rucio's `_finish_requests`), in atomic steps:
 *
 * - replicas that arrived and transfers given up, per destination RSE: `changeReplicaStates`
 *   (replicas AVAILABLE or UNAVAILABLE, their locks OK or STUCK, their rules' counters, states
 *   and notifications) with the requests archived in the same step;
 * - retries: the old request archived naming the new one, the new request queued, and the
 *   replica told to wait for the new one, together;
 * - a copy that arrived for a replica deleted meanwhile is registered with a tombstone of now, so
 *   the reaper removes it instead of leaving dark data.
 *
 * Each request is read from its batch first: the finisher's facts come from read models that may
 * lag, and a request already archived (by another finisher, or cancelled) is left alone. The
 * requests of one batch that a step archives are one event on the batch's stream.
 */

export type FinishOutcome = Readonly<{
  position: bigint | undefined;
  available: number;
  retried: number;
  givenUp: number;
  skipped: readonly Readonly<{ what: string; reason: string }>[];
}>;

type Finishing = Readonly<{ request: ActiveRequest; stream: string; file: FileReplicas; suspicious: string | null }>;

/** Whether the replica still waits for this request (a failure of an older one changes nothing there). */
const waitsFor = (file: FileReplicas, request: ActiveRequest): boolean =>
  file.replicas.get(request.record.destRseId)?.pendingRequest?.id === request.record.id;

type Archiving = Readonly<{ item: Finishing; retriedAs: string | null; error: string | null }>;

/** The archiving of requests, one decision per batch stream. */
const archives = (items: readonly Archiving[], metadata: CommandMetadata): AnyStreamDecision[] =>
  [...groupedBy(items, ({ item }) => item.stream)].map(([stream, group]) =>
    onStream(requestDecider, stream, {
      type: 'ArchiveRequests',
      data: {
        requests: group.map(({ item, retriedAs, error }) => ({ requestId: item.request.record.id, retriedAs, error })),
      },
      metadata,
    } satisfies RequestCommand),
  );

const groupedBy = <T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> => {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
};

/** The suspicious declaration of a failed transfer's source, on the file's stream. */
const suspiciousDeclaration = (item: Finishing, metadata: CommandMetadata): DidStreamCommand[] => {
  const source = item.request.sourcesInUse[0];
  if (item.suspicious === null || !source) return [];
  const { scope, name } = item.request.record;
  return [
    {
      type: 'DeclareReplicaSuspicious',
      data: {
        scope,
        name,
        rse: source.rse,
        rseId: source.rseId,
        reason: item.suspicious,
        transfer: { requestId: item.request.record.id, ruleId: item.request.record.ruleId },
      },
      metadata,
    },
  ];
};

/**
 * The metadata of one step of the finisher's page: the steps of a page may touch one stream (a
 * file whose copies to two RSEs both ended, the batch of a multihop path), so each names its own
 * cause, and derives event ids of its own; a page made again derives the same ones.
 */
const partOf = (metadata: CommandMetadata, part: string): CommandMetadata =>
  metadata.causationId ? { ...metadata, causationId: `${metadata.causationId}/${part}` } : metadata;

export const finishRequests = async (
  context: CommandContext,
  outputs: readonly FinisherOutput[],
  streams: RequestStreams,
  metadata: CommandMetadata,
): Promise<FinishOutcome> => {
  const skipped: { what: string; reason: string }[] = [];
  const suspicious = new Map(
    outputs.flatMap((output) =>
      output.type === 'DeclareSourceSuspicious' ? [[output.data.requestId, output.data.reason] as const] : [],
    ),
  );
  // Each batch is read once, however many of its requests the page names.
  const batches = new Map<string, Promise<RequestBatch>>();
  const load = async (requestId: string): Promise<Finishing | undefined> => {
    const stream = streams.get(requestId);
    if (stream === undefined) throw new Error(`No stream known for request ${requestId}`);
    let batch = batches.get(stream);
    if (!batch) batches.set(stream, (batch = loadRequestBatch(context, stream)));
    const request = requestIn(await batch, requestId);
    if (request.status !== 'Active') {
      skipped.push({
        what: requestId,
        reason: `the request is ${request.status === 'Absent' ? 'unknown' : 'archived already'}`,
      });
      return undefined;
    }
    return {
      request,
      stream,
      file: await loadFileReplicas(context, request.record.scope, request.record.name),
      suspicious: suspicious.get(requestId) ?? null,
    };
  };

  const arrived: Finishing[] = [];
  const givenUp: (Finishing & { error: string | null })[] = [];
  const retries: (Finishing & { lowerRankings: boolean })[] = [];
  const acting = outputs.filter(
    (output): output is Exclude<FinisherOutput, { type: 'DeclareSourceSuspicious' }> =>
      output.type !== 'DeclareSourceSuspicious',
  );
  const loaded = await Promise.all(acting.map((output) => load(output.data.requestId)));
  for (const [index, output] of acting.entries()) {
    const item = loaded[index];
    if (!item) continue;
    if (output.type === 'MarkReplicaAvailable') arrived.push(item);
    else if (output.type === 'GiveUpTransfer') givenUp.push({ ...item, error: output.data.error });
    else retries.push({ ...item, lowerRankings: output.data.lowerRankings });
  }

  let position: bigint | undefined;
  const later = (next: bigint | undefined) => {
    if (next !== undefined && (position === undefined || next > position)) position = next;
  };

  // Replicas that arrived, or that will not, per destination RSE.
  const byRse = new Map<string, { arrived: Finishing[]; givenUp: (Finishing & { error: string | null })[] }>();
  for (const item of arrived) {
    const group = byRse.get(item.request.record.destRse) ?? { arrived: [], givenUp: [] };
    group.arrived.push(item);
    byRse.set(item.request.record.destRse, group);
  }
  for (const item of givenUp) {
    const group = byRse.get(item.request.record.destRse) ?? { arrived: [], givenUp: [] };
    group.givenUp.push(item);
    byRse.set(item.request.record.destRse, group);
  }
  const orphans: Archiving[] = [];
  const orphanDeclarations = new Map<string, DidStreamCommand[]>();
  for (const [rse, group] of byRse) {
    const files: { scope: string; name: string; state: 'AVAILABLE' | 'UNAVAILABLE'; error?: string | null }[] = [];
    const before = new Map<string, DidStreamCommand[]>();
    const archived: Archiving[] = [];
    const darkCopies: Finishing[] = [];
    for (const item of group.arrived) {
      const { scope, name, destRseId } = item.request.record;
      if (!item.file.replicas.has(destRseId)) darkCopies.push(item);
      else {
        files.push({ scope, name, state: 'AVAILABLE' });
        archived.push({ item, retriedAs: null, error: null });
      }
    }
    for (const item of group.givenUp) {
      const { scope, name } = item.request.record;
      const declaration = suspiciousDeclaration(item, metadata);
      if (!waitsFor(item.file, item.request)) {
        // The replica waits for nothing, or for another request: only this one ends.
        orphans.push({ item, retriedAs: null, error: item.error });
        const stream = didStreamName(scope, name);
        if (declaration.length > 0)
          orphanDeclarations.set(stream, [...(orphanDeclarations.get(stream) ?? []), ...declaration]);
        continue;
      }
      files.push({ scope, name, state: 'UNAVAILABLE', error: item.error });
      if (declaration.length > 0)
        before.set(didKey(scope, name), [...(before.get(didKey(scope, name)) ?? []), ...declaration]);
      archived.push({ item, retriedAs: null, error: item.error });
    }
    if (files.length > 0) {
      const step = partOf(metadata, rse);
      const alongside = archives(archived, step);
      later((await changeReplicaStates(context, { rse, files, before, alongside }, step)).position);
    }
    if (darkCopies.length > 0) later(await registerDarkCopies(context, darkCopies, partOf(metadata, `dark-${rse}`)));
  }
  if (orphans.length > 0) {
    const step = partOf(metadata, 'orphans');
    later(
      lastPosition(
        await handleCommands(
          context,
          [
            ...[...orphanDeclarations].map(([stream, commands]) => onStream(didStreamDecider, stream, commands)),
            ...archives(orphans, step),
          ],
          { metadata: step },
        ),
      ),
    );
  }

  if (retries.length > 0) later(await retryRequests(context, retries, partOf(metadata, 'retries')));
  return { position, available: arrived.length, retried: retries.length, givenUp: givenUp.length, skipped };
};

/**
 * Copies that arrived where the replica is gone: the replica is registered again AVAILABLE with a
 * tombstone of now (Rucio's finisher does the same), and the request archived. A file deleted
 * altogether cannot take a replica: the request is only archived.
 */
const registerDarkCopies = async (
  context: CommandContext,
  items: readonly Finishing[],
  metadata: CommandMetadata,
): Promise<bigint | undefined> => {
  const files = new Map<string, DidStreamCommand[]>();
  for (const { request, file } of items) {
    const { scope, name, destRse, destRseId, bytes, md5, adler32 } = request.record;
    if (file.did.status !== 'Live') continue;
    const key = didStreamName(scope, name);
    files.set(key, [
      ...(files.get(key) ?? []),
      {
        type: 'AddReplica',
        data: {
          scope,
          name,
          rse: destRse,
          rseId: destRseId,
          bytes,
          md5,
          adler32,
          path: null,
          state: 'AVAILABLE',
          tombstone: metadata.now.toISOString(),
        },
        metadata,
      },
    ]);
  }
  const decisions: AnyStreamDecision[] = [
    ...archives(
      items.map((item) => ({ item, retriedAs: null, error: null })),
      metadata,
    ),
    ...[...files].map(([streamName, commands]) => onStream(didStreamDecider, streamName, commands)),
  ];
  return lastPosition(await handleCommands(context, decisions, { metadata }));
};

/**
 * Retries, in one step: for each, the replica waits for the new request (if it still waited for
 * the old one), the old request is archived naming the new one, and the new one is queued in the
 * same batch, in PREPARING when the preparer is on. A failure whose replica waits for nothing any
 * more is only archived.
 */
const retryRequests = async (
  context: CommandContext,
  items: readonly (Finishing & { lowerRankings: boolean })[],
  metadata: CommandMetadata,
): Promise<bigint | undefined> => {
  const usePreparer = settingValue((await loadConfig(context)).sections, SETTINGS.conveyorUsePreparer);
  const files = new Map<string, DidStreamCommand[]>();
  const retried = items.map((item) => {
    const { request, file } = item;
    const { scope, name, destRse, destRseId } = request.record;
    const retry = retryRecord(request, metadata.now.toISOString(), item.lowerRankings);
    const stream = didStreamName(scope, name);
    files.set(stream, [
      ...(files.get(stream) ?? []),
      ...suspiciousDeclaration(item, metadata),
      ...(waitsFor(file, request)
        ? [
            {
              type: 'RequeueReplicaTransfer' as const,
              data: {
                scope,
                name,
                rse: destRse,
                rseId: destRseId,
                previousRequestId: request.record.id,
                requestId: retry.id,
              },
              metadata,
            },
          ]
        : []),
    ]);
    const wanted = (decided: DecidedStates) =>
      decided.stateOf(didStreamDecider, stream)?.replicas.get(destRseId)?.pendingRequest?.id === retry.id;
    return { item, retry, wanted };
  });
  const decisions: AnyStreamDecision[] = [
    ...[...files]
      .filter(([, commands]) => commands.length > 0)
      .map(([streamName, commands]) => onStream(didStreamDecider, streamName, commands)),
    ...[...groupedBy(retried, ({ item }) => item.stream)].map(([stream, group]) =>
      onStream(requestDecider, stream, (decided): RequestCommand[] => {
        const requeued = group.filter(({ wanted }) => wanted(decided));
        return [
          {
            type: 'ArchiveRequests',
            data: {
              requests: group.map(({ item, retry, wanted }) => ({
                requestId: item.request.record.id,
                retriedAs: wanted(decided) ? retry.id : null,
                error: item.request.error,
              })),
            },
            metadata,
          },
          ...(requeued.length > 0
            ? [
                {
                  type: 'QueueRequests' as const,
                  data: {
                    requests: requeued.map(({ retry }) => ({
                      request: retry,
                      state: usePreparer ? ('PREPARING' as const) : ('QUEUED' as const),
                    })),
                  },
                  metadata,
                },
              ]
            : []),
        ];
      }),
    ),
  ];
  return lastPosition(await handleCommands(context, decisions, { metadata }));
};
