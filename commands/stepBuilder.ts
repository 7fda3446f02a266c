import { didStreamName } from '../domain/did/did.ts';
import { didStreamDecider, type DidStreamCommand } from '../domain/did/didStreamDecider.ts';
import type { PendingRequest } from '../domain/replica/replica.ts';
import {
  requestBatchStreamName,
  REQUESTS_PER_BATCH,
  type RequestRecord,
  type RequestState,
} from '../domain/request/request.ts';
import { requestDecider, type RequestCommand } from '../domain/request/requestDecider.ts';
import { lockKey, ruleStreamName, type RuleLock, type RuleRecord } from '../domain/rule/rule.ts';
import { ruleDecider, type RuleCommand } from '../domain/rule/ruleDecider.ts';
import type { PlannedLock } from '../domain/rule/rulePlacement.ts';
import type { CommandMetadata } from '../domain/shared/event.ts';
import { onStream, type AnyStreamDecision, type DecidedStates } from './handleCommand.ts';
import { newId } from './newId.ts';

/** A command for a DID stream, or a function making them when the stream is decided. */
export type DidStreamPart = DidStreamCommand | ((decided: DecidedStates) => readonly DidStreamCommand[]);

/** What locking a file needs to know of its RSE and sources, decided by the caller. */
export type LockConditions = Readonly<{
  /** The RSE takes writes, or the rule ignores availability. */
  writable: (rseId: string) => boolean;
  /** False when the rule names source RSEs and none of them holds an AVAILABLE copy of the file. */
  sourceAvailable: (lock: PlannedLock) => boolean;
  /** The state new requests start in: QUEUED, or PREPARING when the preparer is on. */
  requestState: RequestState;
}>;

/** A transfer a step may queue: the lock that needs it, and what its record is made of. */
type BatchedRequest = Readonly<{
  requestId: string;
  rule: RuleRecord;
  lock: PlannedLock;
  state: RequestState;
  retryCount: number | null;
  activity: string | undefined;
}>;

/** A request a step cancels if the file's decision let it go. */
type Cancellation = Readonly<{ requestId: string; reason: string; wanted: (decided: DecidedStates) => boolean }>;

/**
 * The builder of one atomic step over many streams, shared by every area whose step touches DIDs,
 * files, transfer requests and rules (DIDs, replicas, rules, subscriptions, open data, DIRAC, the
 * judge and the recovery daemons). It gathers the streams the step writes so that each is decided
 * once and in the right order: first the DID and file streams (rule attachments, locks and the
 * replicas they create), then the batches of requests the locks queued (one stream per rule and
 * RSE, of at most `REQUESTS_PER_BATCH`, each written with one event) and the requests cancelled,
 * then decisions on other streams (`alongside`), then the rules, which record the locks as the
 * files decided them. `handleCommands` appends everything together: all or nothing. A planned
 * rule joins a step through `addPlannedRule` (commands/rule/ruleCreationCommands.ts).
 */
export class StepBuilder {
  private readonly didStreams = new Map<string, { scope: string; name: string; parts: DidStreamPart[] }>();
  /** New batches of requests by stream, and the batch still open for each rule and RSE. */
  private readonly batches = new Map<string, BatchedRequest[]>();
  private readonly openBatches = new Map<string, string>();
  private readonly cancellations = new Map<string, Cancellation[]>();
  private readonly others: AnyStreamDecision[] = [];
  private readonly rules = new Map<string, ((decided: DecidedStates) => RuleCommand[])[]>();

  constructor(private readonly metadata: CommandMetadata) {}

  /**
   * A command for a DID's stream (a file's stream for locks), after those added before it; a
   * function is called when the stream is decided, after the streams added before it.
   */
  onDid(scope: string, name: string, command: DidStreamPart): this {
    const streamName = didStreamName(scope, name);
    const entry = this.didStreams.get(streamName) ?? { scope, name, parts: [] };
    entry.parts.push(command);
    this.didStreams.set(streamName, entry);
    return this;
  }

  /** Commands for a rule's stream, made when it is decided (after every file of the step). */
  onRule(ruleId: string, commands: (decided: DecidedStates) => RuleCommand[]): this {
    this.rules.set(ruleId, [...(this.rules.get(ruleId) ?? []), commands]);
    return this;
  }

  /**
   * Locks the planned files for a rule: a lock command on each file's stream and, for each, a
   * request that is queued only if the file's decision asked for a transfer. Returns how to read
   * the locks the files decided, for the rule's own record.
   */
  lockFiles(
    rule: RuleRecord,
    locks: readonly PlannedLock[],
    conditions: LockConditions,
  ): (decided: DecidedStates) => RuleLock[] {
    const { metadata } = this;
    for (const lock of locks) {
      const request = this.queue(rule, lock, conditions.requestState, null);
      this.onDid(lock.scope, lock.name, {
        type: 'LockReplica',
        data: {
          scope: lock.scope,
          name: lock.name,
          rse: lock.rse.rse,
          rseId: lock.rse.rseId,
          ruleId: rule.id,
          requestId: request.id,
          requestStream: request.stream,
          writable: conditions.writable(lock.rse.rseId),
          sourceAvailable: conditions.sourceAvailable(lock),
          path: null,
        },
        metadata,
      });
    }
    return (decided) =>
      locks.flatMap((lock) => {
        const file = decided.stateOf(didStreamDecider, didStreamName(lock.scope, lock.name));
        const state = file?.replicas.get(lock.rse.rseId)?.locks.get(rule.id);
        return state
          ? [{ scope: lock.scope, name: lock.name, rseId: lock.rse.rseId, rse: lock.rse.rse, bytes: lock.bytes, state }]
          : [];
      });
  }

  /**
   * Retries STUCK locks in place (the repairer): each lock becomes REPLICATING on its file's
   * stream, and a transfer is queued for it unless one is pending for the replica already.
   */
  retryLocks(
    rule: RuleRecord,
    locks: readonly Readonly<{
      scope: string;
      name: string;
      rse: string;
      rseId: string;
      bytes: number;
      stagingArea: boolean;
    }>[],
    requestState: RequestState,
  ): void {
    const { metadata } = this;
    for (const lock of locks) {
      const planned: PlannedLock = {
        scope: lock.scope,
        name: lock.name,
        bytes: lock.bytes,
        rse: { rseId: lock.rseId, rse: lock.rse, stagingArea: lock.stagingArea, availabilityWrite: true },
        dataset: null,
      };
      const request = this.queue(rule, planned, requestState, 1);
      this.onDid(lock.scope, lock.name, {
        type: 'ChangeReplicaLocks',
        data: {
          scope: lock.scope,
          name: lock.name,
          rse: lock.rse,
          rseId: lock.rseId,
          locks: { [rule.id]: 'REPLICATING' },
          request,
        },
        metadata,
      });
    }
  }

  /**
   * A transfer for a lock, queued if the file's decision in this step asks for it (the replica
   * waits for the returned request): the necromancer's recovery copies go this way, with activity
   * Recovery. The request joins the step's open batch of its rule and RSE.
   */
  queue(
    rule: RuleRecord,
    lock: PlannedLock,
    requestState: RequestState,
    retryCount: number | null,
    activity?: string,
  ): PendingRequest {
    const requestId = newId();
    const key = `${rule.id} ${lock.rse.rseId}`;
    let stream = this.openBatches.get(key);
    if (stream === undefined || this.batches.get(stream)!.length >= REQUESTS_PER_BATCH) {
      stream = requestBatchStreamName(rule.id, lock.rse.rse, requestId);
      this.openBatches.set(key, stream);
      this.batches.set(stream, []);
    }
    this.batches.get(stream)!.push({ requestId, rule, lock, state: requestState, retryCount, activity });
    return { id: requestId, stream };
  }

  /**
   * Cancels a request in this step if `wanted` says so once the files are decided (its replica
   * no longer waits for it); the cancellations of one batch are one event.
   */
  cancel(request: PendingRequest, reason: string, wanted: (decided: DecidedStates) => boolean): this {
    this.cancellations.set(request.stream, [
      ...(this.cancellations.get(request.stream) ?? []),
      { requestId: request.id, reason, wanted },
    ]);
    return this;
  }

  /** Decisions on other streams, appended with the step. */
  alongside(decision: AnyStreamDecision): this {
    this.others.push(decision);
    return this;
  }

  /**
   * Removes a rule's locks on their files' streams; `pending` names, per lock, the transfer the
   * replica was waiting for when read. A transfer is cancelled only if the file's decision let it
   * go (no other lock waits for it any more).
   */
  unlockFiles(
    ruleId: string,
    locks: readonly Readonly<{ scope: string; name: string; rse: string; rseId: string }>[],
    purge: boolean,
    pending: ReadonlyMap<string, PendingRequest>,
    reason: string,
  ): void {
    const { metadata } = this;
    for (const lock of locks) {
      this.onDid(lock.scope, lock.name, {
        type: 'UnlockReplica',
        data: { scope: lock.scope, name: lock.name, rse: lock.rse, rseId: lock.rseId, ruleId, purge },
        metadata,
      });
      const request = pending.get(lockKey(lock.scope, lock.name, lock.rseId));
      if (!request) continue;
      this.cancel(
        request,
        reason,
        (decided) =>
          decided.stateOf(didStreamDecider, didStreamName(lock.scope, lock.name))?.replicas.get(lock.rseId)
            ?.pendingRequest?.id !== request.id,
      );
    }
  }

  decisions(): AnyStreamDecision[] {
    const { metadata } = this;
    return [
      ...[...this.didStreams].map(([, { scope, name, parts }]) =>
        onStream(didStreamDecider, didStreamName(scope, name), (decided) =>
          parts.flatMap((part) => (typeof part === 'function' ? part(decided) : [part])),
        ),
      ),
      ...[...this.batches].map(([stream, batch]) =>
        onStream(
          requestDecider,
          stream,
          (decided): RequestCommand[] => {
            const requests = batch.flatMap(({ requestId, rule, lock, state, retryCount, activity }) => {
              const file = decided.stateOf(didStreamDecider, didStreamName(lock.scope, lock.name));
              if (file?.replicas.get(lock.rse.rseId)?.pendingRequest?.id !== requestId || file.did.status !== 'Live')
                return [];
              const record = requestRecord(
                activity === undefined ? rule : { ...rule, activity },
                lock,
                requestId,
                file.did.record,
                metadata,
              );
              return [{ request: { ...record, retryCount }, state }];
            });
            return requests.length > 0 ? [{ type: 'QueueRequests', data: { requests }, metadata }] : [];
          },
          { fresh: true },
        ),
      ),
      ...[...this.cancellations].map(([stream, cancellations]) =>
        onStream(requestDecider, stream, (decided): RequestCommand[] => {
          const requests = cancellations
            .filter(({ wanted }) => wanted(decided))
            .map(({ requestId, reason }) => ({ requestId, reason }));
          return requests.length > 0 ? [{ type: 'CancelRequests', data: { requests }, metadata }] : [];
        }),
      ),
      ...this.others,
      ...[...this.rules].map(([ruleId, parts]) =>
        onStream(ruleDecider, ruleStreamName(ruleId), (decided) => parts.flatMap((part) => part(decided))),
      ),
    ];
  }
}

const requestRecord = (
  rule: RuleRecord,
  lock: PlannedLock,
  requestId: string,
  file: Readonly<{ bytes: number | null; md5: string | null; adler32: string | null }>,
  metadata: CommandMetadata,
): RequestRecord => {
  const bytes = file.bytes ?? lock.bytes;
  const lifetime =
    rule.expiresAt === null
      ? null
      : Math.max(0, Math.round((Date.parse(rule.expiresAt) - metadata.now.getTime()) / 1000));
  return {
    id: requestId,
    requestType: lock.rse.stagingArea ? 'STAGEIN' : 'TRANSFER',
    scope: lock.scope,
    name: lock.name,
    destRseId: lock.rse.rseId,
    destRse: lock.rse.rse,
    ruleId: rule.id,
    account: rule.account,
    activity: rule.activity,
    bytes,
    md5: file.md5,
    adler32: file.adler32,
    priority: rule.priority,
    retryCount: null,
    previousAttemptId: null,
    attributes: {
      activity: rule.activity,
      sourceReplicaExpression: rule.sourceReplicaExpression,
      lifetime,
      dsScope: lock.dataset?.scope ?? null,
      dsName: lock.dataset?.name ?? null,
      bytes,
      md5: file.md5,
      adler32: file.adler32,
      priority: rule.priority,
      allowTapeSource: true,
    },
    requestedAt: metadata.now.toISOString(),
  };
};

/** The transfers the replicas of `locks` wait for now, by lock key: what an unlock may cancel. */
export const pendingRequestsOf = async (
  loadFile: (
    scope: string,
    name: string,
  ) => Promise<Readonly<{ replicas: ReadonlyMap<string, Readonly<{ pendingRequest: PendingRequest | null }>> }>>,
  locks: readonly Readonly<{ scope: string; name: string; rseId: string }>[],
): Promise<Map<string, PendingRequest>> => {
  const pending = new Map<string, PendingRequest>();
  for (const lock of locks) {
    const requestId = (await loadFile(lock.scope, lock.name)).replicas.get(lock.rseId)?.pendingRequest;
    if (requestId) pending.set(lockKey(lock.scope, lock.name, lock.rseId), requestId);
  }
  return pending;
};
