import { flag, integer, text } from '../config/settingKinds.ts';

/** The `/config` options of the open data catalogue. */
export const OPENDATA_SETTINGS = {
  /**
   * Open data (Rucio's `opendata` section): the RSE expression whose disk replicas an entry's
   * `files` list (no default: Rucio refuses to list files without one), and the rule Rucio
   * reports as an entry's open data rule: the DID's rule of `rule_account` with `rule_copies`
   * copies on `rule_rse_expression` (none reported without an expression).
   */
  opendataRseExpression: text('opendata', 'rse_expression', ''),
  opendataRuleRseExpression: text('opendata', 'rule_rse_expression', ''),
  opendataRuleAccount: text('opendata', 'rule_account', 'root'),
  opendataRuleCopies: integer('opendata', 'rule_copies', 1, 1, 100),
  /**
   * With `rule_enable`, an entry turning PUBLIC gets that rule when the DID has none (on
   * `rule_rse_expression`, else `rse_expression`; grouping DATASET), with `rule_activity` and, with
   * `rule_asynchronous`, its locks placed by the judge later.
   */
  opendataRuleEnable: flag('opendata', 'rule_enable', false),
  opendataRuleActivity: text('opendata', 'rule_activity', 'User Subscriptions'),
  opendataRuleAsynchronous: flag('opendata', 'rule_asynchronous', false),
} as const;
