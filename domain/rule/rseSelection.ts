import type { RseAttributeValue } from '../rse/rse.ts';
import { InsufficientAccountLimit, InsufficientTargetRSEs, InvalidRuleWeight, RSEOverQuota } from './ruleErrors.ts';
import { shuffled, type Random } from './random.ts';

/**
 * Choosing the RSEs of a rule (Rucio's RSESelector): the candidates are the RSEs the expression
 * selects; a weight attribute narrows and weighs them; the owner's quotas and the RSEs' free space
 * narrow them further; then each copy goes to a preferred RSE (one that already holds the data)
 * or to a weighted random one.
 */

/** An RSE the expression selected, with what selection needs of it. */
export type CandidateRse = Readonly<{
  rseId: string;
  rse: string;
  attributes: Readonly<Record<string, RseAttributeValue>>;
  stagingArea: boolean;
  availabilityWrite: boolean;
}>;

/** The owner's quota facts. Bytes; a limit of -1 (or Infinity) means no limit. */
export type QuotaFacts = Readonly<{
  /** Admin owner or `ignore_account_limit`: every RSE has room. */
  unlimited: boolean;
  /** Local limits by RSE id; an RSE without one has none (0 bytes). */
  localLimits: Readonly<Record<string, number>>;
  /** Global limits with the RSE ids their expression selects. */
  globalLimits: readonly Readonly<{ expression: string; bytes: number; rseIds: readonly string[] }>[];
  /** The owner's usage by RSE id (bytes of its locks there). */
  usage: Readonly<Record<string, number>>;
  /** RSE space: the `MaxSpaceAvailable` limit (null: none) and the bytes the catalogue counts there. */
  space: Readonly<Record<string, Readonly<{ maxSpace: number | null; used: number }>>>;
}>;

type Candidate = Readonly<{
  rseId: string;
  rse: string;
  weight: number;
  stagingArea: boolean;
  availabilityWrite: boolean;
  quotaLeft: number;
  spaceLeft: number;
  /** Expressions of the global limits that apply to this RSE. */
  globals: readonly string[];
}>;

export type Selector = Readonly<{
  candidates: readonly Candidate[];
  /** Bytes left per global limit expression. */
  globalLeft: Readonly<Record<string, number>>;
}>;

export type ChosenRse = Readonly<{ rseId: string; rse: string; stagingArea: boolean; availabilityWrite: boolean }>;

const unlimitedOr = (bytes: number | undefined): number =>
  bytes === undefined ? 0 : bytes < 0 ? Number.POSITIVE_INFINITY : bytes;

/**
 * Builds the selector for `copies` copies on `rses`: InvalidRuleWeight when the weight attribute
 * is not numeric, InsufficientTargetRSEs when fewer RSEs than copies carry it,
 * InsufficientAccountLimit when fewer than copies leave the owner room.
 */
export const createSelector = (
  rses: readonly CandidateRse[],
  copies: number,
  weight: string | null,
  quota: QuotaFacts,
): Selector => {
  let weighted: (CandidateRse & { weight: number })[] = rses.map((rse) => ({ ...rse, weight: 1 }));
  if (weight !== null) {
    weighted = [];
    for (const rse of rses) {
      if (!(weight in rse.attributes)) continue;
      const value = Number(rse.attributes[weight]);
      if (typeof rse.attributes[weight] === 'boolean' || !Number.isFinite(value)) {
        throw new InvalidRuleWeight(`The RSE '${rse.rse}' has a non-number specified for the weight '${weight}'`);
      }
      weighted.push({ ...rse, weight: value });
    }
  }
  if (weighted.length < copies) {
    throw new InsufficientTargetRSEs(
      `Target RSE set not sufficient for number of copies. (${copies} copies requested, RSE set size ${weighted.length})`,
    );
  }
  const globalLeft: Record<string, number> = {};
  for (const limit of quota.globalLimits) {
    const used = limit.rseIds.reduce((sum, rseId) => sum + (quota.usage[rseId] ?? 0), 0);
    globalLeft[limit.expression] = (limit.bytes < 0 ? Number.POSITIVE_INFINITY : limit.bytes) - used;
  }
  const candidates: Candidate[] = [];
  for (const rse of weighted) {
    const globals = quota.globalLimits
      .filter((limit) => limit.rseIds.includes(rse.rseId))
      .map((limit) => limit.expression);
    const space = quota.space[rse.rseId];
    const spaceLeft =
      space?.maxSpace === null || space?.maxSpace === undefined
        ? Number.POSITIVE_INFINITY
        : space.maxSpace - space.used;
    const base = {
      rseId: rse.rseId,
      rse: rse.rse,
      weight: rse.weight,
      stagingArea: rse.stagingArea,
      availabilityWrite: rse.availabilityWrite,
    };
    if (quota.unlimited || 'mock' in rse.attributes) {
      candidates.push({
        ...base,
        quotaLeft: Number.POSITIVE_INFINITY,
        spaceLeft: Number.POSITIVE_INFINITY,
        globals: [],
      });
      continue;
    }
    const quotaLeft = unlimitedOr(quota.localLimits[rse.rseId]) - (quota.usage[rse.rseId] ?? 0);
    if (quotaLeft <= 0 || globals.some((expression) => (globalLeft[expression] ?? 0) <= 0)) continue;
    candidates.push({ ...base, quotaLeft, spaceLeft: spaceLeft < 0 ? Number.POSITIVE_INFINITY : spaceLeft, globals });
  }
  if (candidates.length < copies) {
    throw new InsufficientAccountLimit(
      `There is insufficient quota on any of the target RSE's to fullfill the operation.`,
    );
  }
  return { candidates, globalLeft };
};

export type SelectionRequest = Readonly<{
  /** Bytes the copies will take. */
  size: number;
  copies: number;
  /** RSE ids to use first, in order of preference (where the data already is). */
  preferred: readonly string[];
  /** RSE ids not to use (those already holding this rule's copies, for instance). */
  blocklist?: readonly string[];
  /** Bytes of the data already present per RSE id: they need no new space. */
  existingBytes?: Readonly<Record<string, number>>;
  /** Take preferred RSEs in their order rather than at random among them. */
  prioritizeOrderOverWeight?: boolean;
}>;

/**
 * Chooses `copies` RSEs for `size` bytes and returns them with the selector whose quotas the
 * choice used up. RSEOverQuota when the RSEs lack space, InsufficientAccountLimit when the owner
 * lacks quota, InsufficientTargetRSEs when too few RSEs are allowed.
 */
export const selectRses = (
  selector: Selector,
  request: SelectionRequest,
  random: Random,
): { chosen: ChosenRse[]; selector: Selector } => {
  const blocked = new Set(request.blocklist ?? []);
  let remaining = selector.candidates.filter((candidate) => !blocked.has(candidate.rseId));
  if (remaining.length < request.copies)
    throw new InsufficientTargetRSEs('There are not enough target RSEs to fulfil the request at this time.');
  remaining = remaining.filter(
    (candidate) => candidate.spaceLeft >= request.size - (request.existingBytes?.[candidate.rseId] ?? 0),
  );
  if (remaining.length < request.copies)
    throw new RSEOverQuota(`There is insufficient space on any of the target RSE's to fullfill the operation.`);
  remaining = remaining.filter(
    (candidate) =>
      candidate.quotaLeft > request.size &&
      candidate.globals.every((expression) => (selector.globalLeft[expression] ?? 0) >= request.size),
  );
  if (remaining.length < request.copies)
    throw new InsufficientAccountLimit(
      `There is insufficient quota on any of the target RSE's to fullfill the operation.`,
    );

  const chosen: Candidate[] = [];
  for (let copy = 0; copy < request.copies; copy += 1) {
    const open = remaining.filter((candidate) => !chosen.includes(candidate));
    const preferred = request.preferred.flatMap((rseId) => open.filter((candidate) => candidate.rseId === rseId));
    const pick =
      preferred.length > 0
        ? request.prioritizeOrderOverWeight
          ? preferred[0]!
          : weightedPick(preferred, random)
        : weightedPick(open, random);
    chosen.push(pick);
  }
  const used = new Set(chosen.map((candidate) => candidate.rseId));
  const globalLeft = { ...selector.globalLeft };
  for (const candidate of chosen)
    for (const expression of candidate.globals) globalLeft[expression] = (globalLeft[expression] ?? 0) - request.size;
  const candidates = selector.candidates.map((candidate) =>
    used.has(candidate.rseId)
      ? { ...candidate, quotaLeft: candidate.quotaLeft - request.size, spaceLeft: candidate.spaceLeft - request.size }
      : candidate,
  );
  return {
    chosen: chosen.map(({ rseId, rse, stagingArea, availabilityWrite }) => ({
      rseId,
      rse,
      stagingArea,
      availabilityWrite,
    })),
    selector: { candidates, globalLeft },
  };
};

/** A random candidate, each as likely as its weight. */
const weightedPick = (candidates: readonly Candidate[], random: Random): Candidate => {
  const order = shuffled(candidates, random);
  const total = order.reduce((sum, candidate) => sum + candidate.weight, 0);
  const target = random() * total;
  let cumulated = 0;
  for (const candidate of order) {
    cumulated += candidate.weight;
    if (target <= cumulated) return candidate;
  }
  return order[order.length - 1]!;
};
