import type { Replica } from '../../../domain/replica/replica.ts';
import type { Rule } from '../../../domain/rule/rule.ts';
import type { RecordedEvent } from '../../../infra/eventstore/eventStore.ts';
import type { MissingEvent } from '../../../projections/audit/auditQueries.ts';
import type { DidStateAsOf } from '../../../projections/audit/didStateAsOf.ts';

/**
 * One line of an audit history: where the event is (global position, stream, revision), what and
 * when (type, the time its command was decided), who (the acting account and the identity that
 * acted), the request, its trace (`correlation_id`) and the event that caused it for daemon work,
 * the data as stored with the schema version it was written
 * with, and its hash (null for events written before hashing). `identity` and `correlation_id`
 * are left out for events that do not record them (written before they were): such lines read
 * exactly as they did then.
 */
export const renderEvent = (event: RecordedEvent | MissingEvent): Record<string, unknown> => {
  if ('missing' in event)
    return {
      position: Number(event.position),
      error: 'the audit index names this position, but the event store holds no event there',
    };
  const { metadata } = event;
  return {
    position: Number(event.position),
    stream: event.streamName,
    revision: Number(event.revision),
    type: event.type,
    at: metadata.at,
    account: metadata.account,
    ...(metadata.identity ? { identity: metadata.identity } : {}),
    request_id: metadata.requestId,
    ...(metadata.correlationId ? { correlation_id: metadata.correlationId } : {}),
    causation_id: metadata.causationId ?? null,
    schema_version: metadata.schemaVersion,
    ...(metadata.step ? { step: metadata.step } : {}),
    hash: metadata.hash ?? null,
    id: event.id,
    data: event.data,
  };
};

/**
 * A DID as it was (GET /audit/dids/{scope}/{name}/state), in Rucio's column names where Rucio has
 * them. `status` is LIVE, ERASED (a deleted collection) or ABSENT (not created yet, at that
 * point); `position` and `at` name the newest event folded.
 */
export const renderDidState = (
  scope: string,
  name: string,
  asOf: string | number | null,
  state: DidStateAsOf,
): Record<string, unknown> => {
  const { did } = state.did;
  const last = state.lastEvent;
  const base = {
    scope,
    name,
    as_of: asOf,
    position: last ? Number(last.position) : null,
    at: last ? last.metadata.at : null,
    status: did.status === 'Live' ? 'LIVE' : did.status === 'Erased' ? 'ERASED' : 'ABSENT',
  };
  if (did.status === 'Absent') return base;
  const { record } = did;
  const rendered: Record<string, unknown> = {
    ...base,
    did_type: record.didType,
    account: record.account,
    created_at: record.createdAt,
    monotonic: record.monotonic,
    open: record.isOpen,
    closed_at: record.closedAt,
    expired_at: record.expiredAt,
    availability: record.availability,
    bytes: record.bytes,
    adler32: record.adler32,
    md5: record.md5,
    guid: record.guid,
    events: record.events,
    metadata: record.columns,
  };
  if (did.status === 'Erased') return rendered;
  return {
    ...rendered,
    json_metadata: did.jsonMeta,
    followers: [...did.followers].sort(),
    content:
      record.didType === 'FILE'
        ? null
        : {
            length: did.content.totals.length,
            bytes: did.content.totals.bytes,
            events: did.content.totals.events,
            children: [...did.content.children.values()].map((child) => ({
              scope: child.scope,
              name: child.name,
              did_type: child.didType,
              bytes: child.bytes,
              adler32: child.adler32,
              md5: child.md5,
              guid: child.guid,
              events: child.events,
            })),
          },
    replicas: [...state.did.replicas.values()].map(renderReplica),
    rules: state.rules.map(({ ruleId, rule }) => renderRule(ruleId, rule)),
  };
};

const renderReplica = (replica: Replica): Record<string, unknown> => ({
  rse: replica.rse,
  rse_id: replica.rseId,
  state: replica.state,
  bytes: replica.bytes,
  md5: replica.md5,
  adler32: replica.adler32,
  path: replica.path,
  tombstone: replica.tombstone,
  created_at: replica.createdAt,
  locks: Object.fromEntries(replica.locks),
  pending_request: replica.pendingRequest?.id ?? null,
  declared_bad: replica.declaredBad,
});

export const renderRule = (ruleId: string, rule: Rule): Record<string, unknown> => {
  if (rule.status === 'Absent') return { id: ruleId, status: 'ABSENT' };
  const { record } = rule;
  const options = {
    id: ruleId,
    account: record.account,
    rse_expression: record.rseExpression,
    copies: record.copies,
    grouping: record.grouping,
    locked: record.locked,
    activity: record.activity,
    expires_at: record.expiresAt,
    created_at: record.createdAt,
    requested_by: record.requestedBy,
    comments: record.comments,
  };
  if (rule.status === 'Deleted') return { ...options, status: 'DELETED' };
  return {
    ...options,
    status: 'LIVE',
    state: rule.state,
    error: rule.error,
    locks_ok_cnt: rule.counters.ok,
    locks_replicating_cnt: rule.counters.replicating,
    locks_stuck_cnt: rule.counters.stuck,
    child_rule_id: rule.childRuleId,
  };
};
