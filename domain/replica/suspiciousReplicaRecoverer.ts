import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';
import { compilePythonPattern, pythonPatternProblem, UnsupportedPattern } from '../shared/pythonRegex.ts';
import { isOneOf, isRecord } from '../shared/narrowing.ts';

/**
 * The suspicious-replica-recoverer (Rucio's daemon, §2.4): replicas declared SUSPICIOUS more than
 * `nattempts` times within the window, on RSEs with `enable_suspicious_file_recovery`, turn BAD
 * (the necromancer then recovers or loses them). An RSE with more such replicas than its limit is
 * taken for broken instead: its suspicious replicas become TEMPORARY_UNAVAILABLE for three days.
 * A replica with a copy elsewhere is declared BAD; a last copy only when the reason names the
 * auditor, or when a policy entry for its scope and datatype says "declare bad" and a reason names
 * a checksum (Rucio's rules). Outside active mode nothing is declared: the cycle reports what it
 * would do.
 */

/** One entry of Rucio's policy file: regular expressions on scope and datatype (empty: any), and the action for last copies. */
export type SuspiciousPolicy = Readonly<{ scope: readonly string[]; datatype: readonly string[]; action: string }>;

/** A replica declared suspicious often enough, as the read models show it. */
export type SuspiciousReplica = Readonly<{
  scope: string;
  name: string;
  rse: string;
  rseId: string;
  /** Suspicious declarations within the window. */
  count: number;
  /** Another AVAILABLE replica of the file exists. */
  availableElsewhere: boolean;
  /** The reasons given with the declarations. */
  reasons: readonly string[];
  /** The file's `datatype` metadata, if any. */
  datatype: string | null;
}>;

export type RecovererTick = Readonly<{
  activeMode: boolean;
  limitPerRse: number;
  policies: readonly SuspiciousPolicy[];
}>;

export type DeclareReplicaBad = WorkflowOutput<
  'DeclareReplicaBad',
  { scope: string; name: string; rse: string; rseId: string; reason: string }
>;
export type DeclareReplicaTemporarilyUnavailable = WorkflowOutput<
  'DeclareReplicaTemporarilyUnavailable',
  { scope: string; name: string; rse: string; rseId: string; days: number }
>;
export type RecovererOutput = DeclareReplicaBad | DeclareReplicaTemporarilyUnavailable | Skipped;

/** Rucio's reason for the BAD declarations of this daemon. */
export const AUTOMATIC_RECOVERY = 'Suspicious. Automatic recovery.';

/** How long the replicas of a broken RSE stay unreadable (Rucio: three days). */
export const BROKEN_RSE_DAYS = 3;

/** What a policy entry may say of last copies (Rucio's daemon knows these three). */
export const POLICY_ACTIONS = ['declare bad', 'ignore', 'dry run'] as const;

const isPatternList = (value: unknown): value is string[] =>
  Array.isArray(value) &&
  value.every((item): item is string => typeof item === 'string' && pythonPatternProblem(item) === undefined);

/**
 * The policy entries of Rucio's JSON file, given as text (the empty text: none); undefined when
 * the text is not a JSON list of entries with a known action and lists of regular expressions
 * RE2 runs (the setting refuses such text when it is stored).
 */
export const parsePolicies = (text: string): SuspiciousPolicy[] | undefined => {
  if (text.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const policies: SuspiciousPolicy[] = [];
  for (const entry of parsed as unknown[]) {
    if (!isRecord(entry)) return undefined;
    const { scope = [], datatype = [], action } = entry;
    if (typeof action !== 'string' || !isOneOf(POLICY_ACTIONS, action)) return undefined;
    if (!isPatternList(scope) || !isPatternList(datatype)) return undefined;
    policies.push({ scope, datatype, action });
  }
  return policies;
};

/** Python's `re.match`, on RE2 (domain/shared/pythonRegex.ts); an expression it cannot run matches nothing. */
const matches = (patterns: readonly string[], value: string): boolean =>
  patterns.length === 0 ||
  patterns.some((pattern) => {
    try {
      return compilePythonPattern(pattern)(value);
    } catch (error) {
      if (error instanceof UnsupportedPattern) return false;
      throw error;
    }
  });

/** Rucio's `check_suspicious_policy`: the action of the first entry matching scope and datatype. */
const policyAction = (policies: readonly SuspiciousPolicy[], scope: string, datatype: string): string | undefined =>
  policies.find((policy) => matches(policy.scope, scope) && matches(policy.datatype, datatype))?.action;

const lastCopyDecision = (
  replica: SuspiciousReplica,
  policies: readonly SuspiciousPolicy[],
): { declare: boolean; why: string } => {
  if (replica.datatype === null) return { declare: false, why: 'the last copy has no datatype: no action' };
  const action = policyAction(policies, replica.scope, replica.datatype);
  if (action === undefined) return { declare: false, why: 'the last copy matches no policy entry: ignored' };
  if (action === 'ignore' || action === 'dry run')
    return { declare: false, why: `the last copy's policy says ${action}` };
  if (action !== 'declare bad') return { declare: false, why: `unknown policy action ${action}` };
  if (!replica.reasons.some((reason) => reason.toLowerCase().includes('checksum')))
    return { declare: false, why: 'the last copy was not declared for a checksum problem' };
  return { declare: true, why: 'policy: declare bad' };
};

export const suspiciousReplicaRecoverer: Workflow<
  RecovererTick,
  Readonly<{ suspicious: readonly SuspiciousReplica[] }>,
  RecovererOutput
> = {
  name: 'suspicious-replica-recoverer',
  decide: ({ activeMode, limitPerRse, policies }, { suspicious }) => {
    const byRse = new Map<string, SuspiciousReplica[]>();
    for (const replica of suspicious) byRse.set(replica.rseId, [...(byRse.get(replica.rseId) ?? []), replica]);
    const outputs: RecovererOutput[] = [];
    const passive = (what: string, action: string) =>
      outputs.push({ type: 'Skipped', data: { what, reason: `active_mode is off: would ${action}` } });
    for (const replicas of byRse.values()) {
      if (replicas.length > limitPerRse) {
        for (const { scope, name, rse, rseId } of replicas) {
          if (activeMode)
            outputs.push({
              type: 'DeclareReplicaTemporarilyUnavailable',
              data: { scope, name, rse, rseId, days: BROKEN_RSE_DAYS },
            });
          else
            passive(
              `${scope}:${name} on ${rse}`,
              `make it TEMPORARY_UNAVAILABLE (${replicas.length} suspicious replicas on ${rse})`,
            );
        }
        continue;
      }
      for (const replica of replicas) {
        const { scope, name, rse, rseId } = replica;
        const what = `${scope}:${name} on ${rse}`;
        const fromAuditor = replica.reasons.some((reason) => reason.toLowerCase().includes('auditor'));
        const decision =
          fromAuditor || replica.availableElsewhere ? { declare: true, why: '' } : lastCopyDecision(replica, policies);
        if (!decision.declare) outputs.push({ type: 'Skipped', data: { what, reason: decision.why } });
        else if (activeMode)
          outputs.push({ type: 'DeclareReplicaBad', data: { scope, name, rse, rseId, reason: AUTOMATIC_RECOVERY } });
        else passive(what, 'declare it BAD');
      }
    }
    return outputs;
  },
};
