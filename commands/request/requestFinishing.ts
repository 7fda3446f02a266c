import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { didKey, didStreamName } from '../../domain/did/did.ts';
import type { FileReplicas } from '../../domain/replica/replica.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/replica/didStreamDecider.ts';
import type { FinisherOutput } from '../../domain/request/finisher.ts';
import { requestStreamName, type ActiveRequest } from '../../domain/request/request.ts';
import { requestDecider, type RequestCommand } from '../../domain/request/requestDecider.ts';
import { retryRecord } from '../../domain/request/retries.ts';
import type { Command, CommandMetadata } from '../../domain/shared/event.ts';
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
import { loadRequest } from './conveyorSteps.ts';

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
 * Each request is read from its own stream first: the finisher's facts come from read models that
 * may lag, and a request already archived (by another finisher, or cancelled) is left alone.
 */

export type FinishOutcome = Readonly<{
  position: bigint | undefined;
  available: number;
  retried: number;
  givenUp: number;
  skipped: readonly Readonly<{ what: string; reason: string }>[];
}>;

type Finishing = Readonly<{ request: ActiveRequest; file: FileReplicas; suspicious: string | null }>;

/** Whether the replica still waits for this request (a failure of an older one changes nothing there). */
const waitsFor = (file: FileReplicas, request: ActiveRequest): boolean =>
  file.replicas.get(request.record.destRseId)?.pendingRequest === request.record.id;

const archive = (
  request: ActiveRequest,
  retriedAs: string | null,
  error: string | null,
  metadata: CommandMetadata,
): AnyStreamDecision =>
  onStream(requestDecider, requestStreamName(request.record.id), {
    type: 'ArchiveRequest',
    data: { retriedAs, error },
    metadata,
  } satisfies RequestCommand);

/** The suspicious declaration of a failed transfer's source, on the file's stream. */
const suspiciousDeclaration = (item: Finishing, metadata: CommandMetadata): DidStreamCommand[] => {
  const source = item.request.sourcesInUse[0];
  if (item.suspicious === null || !source) return [];
  const { scope, name } = item.request.record;
  return [
    {
      type: 'DeclareReplicaSuspicious',
      data: { scope, name, rse: source.rse, rseId: source.rseId, reason: item.suspicious },
      metadata,
    },
  ];
};

export const finishRequests = async (
  context: CommandContext,
  outputs: readonly FinisherOutput[],
  metadata: CommandMetadata,
): Promise<FinishOutcome> => {
  const skipped: { what: string; reason: string }[] = [];
  const suspicious = new Map(
    outputs.flatMap((output) =>
      output.type === 'DeclareSourceSuspicious' ? [[output.data.requestId, output.data.reason] as const] : [],
    ),
  );
  const load = async (requestId: string): Promise<Finishing | undefined> => {
    const request = await loadRequest(context, requestId);
    if (request.status !== 'Active') {
      skipped.push({
        what: requestId,
        reason: `the request is ${request.status === 'Absent' ? 'unknown' : 'archived already'}`,
      });
      return undefined;
    }
    return {
      request,
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
  const orphans: AnyStreamDecision[] = [];
  for (const [rse, group] of byRse) {
    const files: { scope: string; name: string; state: 'AVAILABLE' | 'UNAVAILABLE'; error?: string | null }[] = [];
    const before = new Map<string, DidStreamCommand[]>();
    const alongside: AnyStreamDecision[] = [];
    const darkCopies: Finishing[] = [];
    for (const item of group.arrived) {
      const { scope, name, destRseId } = item.request.record;
      if (!item.file.replicas.has(destRseId)) darkCopies.push(item);
      else {
        files.push({ scope, name, state: 'AVAILABLE' });
        alongside.push(archive(item.request, null, null, metadata));
      }
    }
    for (const item of group.givenUp) {
      const { scope, name } = item.request.record;
      const declaration = suspiciousDeclaration(item, metadata);
      if (!waitsFor(item.file, item.request)) {
        // The replica waits for nothing, or for another request: only this one ends.
        orphans.push(archive(item.request, null, item.error, metadata));
        if (declaration.length > 0) orphans.push(onStream(didStreamDecider, didStreamName(scope, name), declaration));
        continue;
      }
      files.push({ scope, name, state: 'UNAVAILABLE', error: item.error });
      if (declaration.length > 0)
        before.set(didKey(scope, name), [...(before.get(didKey(scope, name)) ?? []), ...declaration]);
      alongside.push(archive(item.request, null, item.error, metadata));
    }
    if (files.length > 0)
      later((await changeReplicaStates(context, { rse, files, before, alongside }, metadata)).position);
    if (darkCopies.length > 0) later(await registerDarkCopies(context, darkCopies, metadata));
  }
  if (orphans.length > 0) later(lastPosition(await handleCommands(context, mergedPerStream(orphans), { metadata })));

  if (retries.length > 0) later(await retryRequests(context, retries, metadata));
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
  const decisions: AnyStreamDecision[] = [];
  const files = new Map<string, DidStreamCommand[]>();
  for (const { request, file } of items) {
    const { scope, name, destRse, destRseId, bytes, md5, adler32 } = request.record;
    decisions.push(archive(request, null, null, metadata));
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
  for (const [streamName, commands] of files) decisions.push(onStream(didStreamDecider, streamName, commands));
  return lastPosition(await handleCommands(context, decisions, { metadata }));
};

/** The commands of a decision known before deciding (all the finisher makes). */
const listed = (decision: AnyStreamDecision): readonly Command[] => {
  if (typeof decision.commands === 'function')
    throw new Error(
      `The decision on ${decision.streamName} depends on other streams: it cannot be joined with another`,
    );
  return decision.commands;
};

/** Decisions on the same stream joined into one (a step decides each stream once). */
const mergedPerStream = (decisions: readonly AnyStreamDecision[]): AnyStreamDecision[] => {
  const byStream = new Map<string, AnyStreamDecision>();
  for (const decision of decisions) {
    const earlier = byStream.get(decision.streamName);
    if (!earlier) byStream.set(decision.streamName, decision);
    else byStream.set(decision.streamName, { ...earlier, commands: [...listed(earlier), ...listed(decision)] });
  }
  return [...byStream.values()];
};

/**
 * Retries, in one step: for each, the replica waits for the new request (if it still waited for
 * the old one), the old request is archived naming the new one, and the new one is queued, in
 * PREPARING when the preparer is on. A failure whose replica waits for nothing any more is only
 * archived.
 */
const retryRequests = async (
  context: CommandContext,
  items: readonly (Finishing & { lowerRankings: boolean })[],
  metadata: CommandMetadata,
): Promise<bigint | undefined> => {
  const usePreparer = settingValue((await loadConfig(context)).sections, SETTINGS.conveyorUsePreparer);
  const files = new Map<string, DidStreamCommand[]>();
  const requests: AnyStreamDecision[] = [];
  for (const item of items) {
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
    const retried = (decided: DecidedStates) =>
      decided.stateOf(didStreamDecider, stream)?.replicas.get(destRseId)?.pendingRequest === retry.id;
    requests.push(
      onStream(requestDecider, requestStreamName(request.record.id), (decided): RequestCommand[] => [
        {
          type: 'ArchiveRequest',
          data: { retriedAs: retried(decided) ? retry.id : null, error: request.error },
          metadata,
        },
      ]),
      onStream(requestDecider, requestStreamName(retry.id), (decided): RequestCommand[] =>
        retried(decided)
          ? [{ type: 'QueueRequest', data: { request: retry, state: usePreparer ? 'PREPARING' : 'QUEUED' }, metadata }]
          : [],
      ),
    );
  }
  const decisions = [
    ...[...files]
      .filter(([, commands]) => commands.length > 0)
      .map(([streamName, commands]) => onStream(didStreamDecider, streamName, commands)),
    ...requests,
  ];
  return lastPosition(await handleCommands(context, decisions, { metadata }));
};
