/**
 * A name pattern with wildcards (`*`, and `%` where Rucio's SQL LIKE reads it) as the source of
 * an anchored regular expression, every other character literal.
 *
 * The obvious translation, each wildcard `.*`, backtracks: `*a*a*a*a*a*a*b` against a 60-character
 * name takes seconds, and every extra wildcard multiplies that (a way to stall the server with one
 * request). Here each part between two wildcards is found at its first place after the previous
 * one, inside a lookahead whose capture is then consumed: JavaScript and MongoDB (PCRE) never
 * backtrack into a lookahead, and the first place is always the right one for a middle part. The
 * last part must end the name. Matching is then linear in the name for each part.
 */
export const wildcardRegexSource = (pattern: string, wildcards: RegExp = /\*/): string => {
  const parts = pattern.split(wildcards).map((part) => part.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'));
  if (parts.length === 1) return `^${parts[0]}$`;
  const [first, ...rest] = parts;
  const last = rest.pop()!;
  const middle = rest.map((part, index) => `(?=([\\s\\S]*?${part}))\\${index + 1}`).join('');
  return `^${first}${middle}[\\s\\S]*${last}$`;
};
