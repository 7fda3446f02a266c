import { evaluateRseExpression, type RseFacts } from '../rse/rseExpression.ts';
import { seededRandom } from '../rule/random.ts';
import { createSelector, selectRses, type QuotaFacts } from '../rule/rseSelection.ts';
import { RucioError } from '../shared/errors.ts';

/**
 * `split_rule` (Rucio's `__split_rule_select_rses`): instead of one rule of `copies` copies, one
 * rule of one copy on each of `copies` single RSEs of the expression. The RSEs the subscription's
 * rules on the DID use already are preferred (and none is added when they are enough); the
 * choice is weighted and bounded by the owner's quota as a rule's would be, first without the
 * RSEs closed for writing, then with them.
 */

export type SplitChoice =
  | Readonly<{ kind: 'chosen'; rses: readonly string[] }>
  /** The RSEs already used cover the copies. */
  | Readonly<{ kind: 'covered' }>
  | Readonly<{ kind: 'impossible'; reason: string }>;

export const chooseSplitRses = (
  request: Readonly<{ rseExpression: string; copies: number; weight: string | null; seed: number }>,
  facts: Readonly<{ rses: readonly RseFacts[]; quota: QuotaFacts; usedRses: readonly string[] }>,
): SplitChoice => {
  let candidates: RseFacts[];
  try {
    candidates = evaluateRseExpression(request.rseExpression, facts.rses);
  } catch (error) {
    if (!(error instanceof RucioError)) throw error;
    return { kind: 'impossible', reason: `${error.exceptionClass}: ${error.message}` };
  }
  const used = new Set(facts.usedRses);
  const preferred = candidates.filter((rse) => used.has(rse.rse));
  if (preferred.length >= request.copies) return { kind: 'covered' };
  const closed = candidates.filter((rse) => !rse.properties.availability_write).map((rse) => rse.id);
  let reason = '';
  for (const blocklist of [closed, []]) {
    try {
      const selector = createSelector(
        candidates.map((rse) => ({
          rseId: rse.id,
          rse: rse.rse,
          attributes: rse.attributes,
          stagingArea: rse.properties.staging_area,
          availabilityWrite: rse.properties.availability_write,
        })),
        request.copies,
        request.weight,
        facts.quota,
      );
      const { chosen } = selectRses(
        selector,
        { size: 0, copies: request.copies, preferred: preferred.map((rse) => rse.id), blocklist },
        seededRandom(request.seed),
      );
      return { kind: 'chosen', rses: chosen.map((rse) => rse.rse).filter((rse) => !used.has(rse)) };
    } catch (error) {
      if (!(error instanceof RucioError)) throw error;
      reason = `${error.exceptionClass}: ${error.message}`;
    }
  }
  return { kind: 'impossible', reason };
};
