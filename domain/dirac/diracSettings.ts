import { parseDiracLifetimes, SCOPE_CONVENTIONS, type ScopeConvention } from './diracPaths.ts';
import type { Setting } from '../config/settingKinds.ts';
import { text } from '../config/settingKinds.ts';

/** Any name is taken, as Rucio takes it: one it does not ship reads as `def` (undefined here). */
const scopeConvention = (section: string, option: string): Setting<ScopeConvention | undefined> => ({
  section,
  option,
  defaultValue: undefined,
  allowed: `a scope extraction algorithm (${SCOPE_CONVENTIONS.join(', ')}; any other name means def)`,
  parse: (value) => SCOPE_CONVENTIONS.find((convention) => convention === value),
  accepts: () => true,
});

/** The `/config` options of DIRAC's catalogue calls (domain/dirac/diracPaths.ts). */
export const DIRAC_SETTINGS = {
  /**
   * How a scope is read from a DID name without one (Rucio's `extract_scope` algorithms):
   * `def`, the scope before the first dot (two parts for `user.` and `group.`), or `dirac`, the
   * second path element of `/vo/scope/...` (the first for `/vo`). Rucio reads `common`, then
   * `policy`; an unknown name is `def`, as in Rucio.
   */
  extractScope: scopeConvention('common', 'extract_scope'),
  policyExtractScope: scopeConvention('policy', 'extract_scope'),
  /**
   * DIRAC's `add_files`: the lifetime (seconds) of the rule a new dataset gets, by scope, as a JSON
   * object of Python regular expressions (matched from the start of the scope, first match wins)
   * to seconds; `{}` for none. Checked when read: invalid JSON is refused, as in Rucio.
   */
  diracLifetime: text(
    'dirac',
    'lifetime',
    '{}',
    'a JSON object of scope patterns (RE2, without backreferences or lookarounds) to seconds',
    (value) => {
      try {
        parseDiracLifetimes(value);
        return true;
      } catch {
        return false;
      }
    },
  ),
} as const;
