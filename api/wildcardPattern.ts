import { wildcardRegexSource } from '../domain/shared/wildcards.ts';

/**
 * A Rucio name pattern with `*` wildcards as an anchored regular expression. Everything but `*`
 * matches literally (Rucio's SQL LIKE would also let `_` match any character; names use `_` a
 * lot, so here it only matches itself). It never backtracks (domain/shared/wildcards.ts).
 */
export const wildcardPattern = (pattern: string): string => wildcardRegexSource(pattern);
