/**
 * A Rucio name pattern with `*` wildcards as an anchored regular expression. Everything but `*`
 * matches literally (Rucio's SQL LIKE would also let `_` match any character; names use `_` a
 * lot, so here it only matches itself).
 */
export const wildcardPattern = (pattern: string): string =>
  `^${pattern
    .split('*')
    .map((part) => part.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'))
    .join('.*')}$`;
