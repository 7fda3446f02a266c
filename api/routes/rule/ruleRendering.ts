import { rucioDateOrNull } from '../../../domain/shared/dates.ts';
import { rucioAttributes, type RequestDocument } from '../../../projections/request/requestsProjection.ts';
import type {
  DatasetLockDocument,
  RuleDocument,
  RuleHistoryDocument,
  RuleLockDocument,
} from '../../../projections/rule/ruleProjection.ts';

/** The JSON shapes of Rucio's rule answers, built from the read models (dates in Rucio's format). */

/** A rule as `get_rule` gives it (every column of the rule row); `list_rules` adds the DID's bytes. */
export const ruleJson = (rule: RuleDocument, bytes?: number | null) => ({
  id: rule.id,
  subscription_id: rule.subscription_id,
  account: rule.account,
  scope: rule.scope,
  name: rule.name,
  did_type: rule.did_type,
  state: rule.state,
  error: rule.error,
  rse_expression: rule.rse_expression,
  copies: rule.copies,
  expires_at: rucioDateOrNull(rule.expires_at),
  weight: rule.weight,
  locked: rule.locked,
  locks_ok_cnt: rule.locks_ok_cnt,
  locks_replicating_cnt: rule.locks_replicating_cnt,
  locks_stuck_cnt: rule.locks_stuck_cnt,
  source_replica_expression: rule.source_replica_expression,
  activity: rule.activity,
  grouping: rule.grouping,
  notification: rule.notification,
  stuck_at: rucioDateOrNull(rule.stuck_at),
  purge_replicas: rule.purge_replicas,
  ignore_availability: rule.ignore_availability,
  ignore_account_limit: rule.ignore_account_limit,
  priority: rule.priority,
  comments: rule.comments,
  child_rule_id: rule.child_rule_id,
  eol_at: rucioDateOrNull(rule.eol_at),
  split_container: rule.split_container,
  // Rucio keeps `meta` as a JSON text column and returns it as such.
  meta: rule.meta === null ? null : JSON.stringify(rule.meta),
  created_at: rucioDateOrNull(rule.created_at),
  updated_at: rucioDateOrNull(rule.updated_at),
  ...(bytes !== undefined ? { bytes } : {}),
});

/** A replica lock as `get_replica_locks_for_rule_id` gives it. */
export const replicaLockJson = (lock: RuleLockDocument) => ({
  scope: lock.scope,
  name: lock.name,
  rse_id: lock.rse_id,
  rse: lock.rse,
  state: lock.state,
  rule_id: lock.rule_id,
});

export const datasetLockJson = (lock: DatasetLockDocument) => ({
  rse_id: lock.rse_id,
  rse: lock.rse,
  scope: lock.scope,
  name: lock.name,
  rule_id: lock.rule_id,
  account: lock.account,
  state: lock.state,
  length: lock.length,
  bytes: lock.bytes,
  accessed_at: rucioDateOrNull(lock.accessed_at),
});

/**
 * A row of a DID's rule history (`list_rule_full_history`), with what changed and who changed it
 * (our addition, for auditors; the client ignores keys it does not know).
 */
export const didRuleHistoryJson = (row: RuleHistoryDocument) => ({
  rule_id: row.rule_id,
  scope: row.scope,
  name: row.name,
  created_at: rucioDateOrNull(row.created_at),
  updated_at: rucioDateOrNull(row.updated_at),
  state: row.state,
  locks_ok_cnt: row.locks_ok_cnt,
  locks_stuck_cnt: row.locks_stuck_cnt,
  locks_replicating_cnt: row.locks_replicating_cnt,
  rse_expression: row.rse_expression,
  account: row.account,
  event: row.event,
  by: row.actor,
  cause: row.cause,
});

/** A transfer request as `get_request_by_did` gives it, with the RSE names. */
export const requestJson = (request: RequestDocument) => ({
  id: request.id,
  request_type: request.request_type,
  scope: request.scope,
  name: request.name,
  did_type: request.did_type,
  dest_rse_id: request.dest_rse_id,
  source_rse_id: request.source_rse_id,
  attributes: JSON.stringify(rucioAttributes(request)),
  state: request.state,
  external_id: request.external_id,
  external_host: request.external_host,
  retry_count: request.retry_count,
  err_msg: request.err_msg,
  previous_attempt_id: request.previous_attempt_id,
  rule_id: request.rule_id,
  activity: request.activity,
  bytes: request.bytes,
  md5: request.md5,
  adler32: request.adler32,
  dest_url: request.dest_url,
  submitted_at: rucioDateOrNull(request.submitted_at),
  started_at: rucioDateOrNull(request.started_at),
  transferred_at: rucioDateOrNull(request.transferred_at),
  estimated_at: null,
  submitter_id: null,
  estimated_started_at: null,
  estimated_transferred_at: null,
  staging_started_at: rucioDateOrNull(request.staging_started_at ?? null),
  staging_finished_at: rucioDateOrNull(request.staging_finished_at ?? null),
  account: request.account,
  requested_at: rucioDateOrNull(request.requested_at),
  priority: request.priority,
  transfertool: request.transfertool,
  created_at: rucioDateOrNull(request.created_at),
  updated_at: rucioDateOrNull(request.updated_at),
  source_rse: request.source_rse,
  dest_rse: request.dest_rse,
  // Not Rucio's, and only on a multihop path: the path (RSE names, source first) and the request's
  // place on it, from Rucio's transfer_hops table, which its API does not show.
  ...(request.transfer_path
    ? {
        transfer_path: request.transfer_path,
        initial_request_id: request.initial_request_id ?? null,
        previous_hop_request_id: request.previous_hop_request_id ?? null,
        next_hop_request_id: request.next_hop_request_id ?? null,
      }
    : {}),
});
