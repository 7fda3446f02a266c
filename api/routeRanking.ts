/**
 * Werkzeug's ranking of URL rules (werkzeug/routing/rules.py `_parse_rule` and matcher.py, 2.2
 * and later), for paths in @koa/router's syntax: `:name` is Werkzeug's `<name>`, `*name` its
 * `<path:name>`.
 *
 * Werkzeug cuts a rule at its slashes into parts; a `<path:…>` variable and everything after it
 * form one final part. It matches depth first and backtracks: a static part before any variable
 * one, variable parts by their weight. Sorted by the same keys part by part, the first route that
 * matches is the one Werkzeug picks.
 */

/** Werkzeug's `Weighting`: compared field by field, the smaller first. */
type Weighting = Readonly<{
  /** Minus the count of static words. */
  staticCount: number;
  /** Per static word: its index and minus its length, so longer words come first. */
  statics: readonly (readonly [number, number])[];
  /** Minus the count of variables. */
  argumentCount: number;
  /** Per variable, its converter's weight. */
  arguments: readonly number[];
}>;

type Part = { kind: 'static' } | { kind: 'variable'; weight: Weighting };

/** The weights of Werkzeug's default (`[^/]+`) and `path` converters. */
const SEGMENT_WEIGHT = 100;
const PATH_WEIGHT = 200;

export type RouteRank = Readonly<{
  parts: readonly Part[];
  /** The path with variable names dropped: routes of one shape share Werkzeug's state. */
  shape: string;
}>;

/** Ranks a path; throws on syntax the ranking does not know (optional groups, inline regexps). */
export const rankPath = (path: string): RouteRank => {
  const segments = path.split('/').slice(1);
  const parts: Part[] = [];
  for (const [index, segment] of segments.entries()) {
    if (!/^(:\w+|\*\w+|[^:*{}()?+]*)$/.test(segment))
      throw new Error(`The route ${path} uses syntax Werkzeug's ranking does not cover`);
    if (segment.startsWith('*')) {
      parts.push({ kind: 'variable', weight: finalPartWeight(segments.slice(index + 1)) });
      break;
    }
    parts.push(
      segment.startsWith(':') ? { kind: 'variable', weight: weighting([], [SEGMENT_WEIGHT]) } : { kind: 'static' },
    );
  }
  return { parts, shape: segments.map((segment) => (/^[:*]/.test(segment) ? segment[0] : segment)).join('/') };
};

/** `<path:x>` and the segments after it: one part holding all their words and variables. */
const finalPartWeight = (rest: readonly string[]): Weighting => {
  const statics: [number, number][] = [];
  const argumentWeights = [PATH_WEIGHT];
  for (const segment of rest) {
    if (segment.startsWith(':')) argumentWeights.push(SEGMENT_WEIGHT);
    else if (segment.startsWith('*')) argumentWeights.push(PATH_WEIGHT);
    else if (segment !== '') statics.push([statics.length, -segment.length]);
  }
  return weighting(statics, argumentWeights);
};

const weighting = (statics: readonly (readonly [number, number])[], argumentWeights: readonly number[]): Weighting => ({
  staticCount: -statics.length,
  statics,
  argumentCount: -argumentWeights.length,
  arguments: argumentWeights,
});

/**
 * Negative when `a` is tried before `b`. Statics tie with statics: two different words never
 * match the same segment, so their order does not matter. Where one path is the other plus more
 * parts (they never match the same URL) the longer goes first.
 */
export const compareRanks = (a: RouteRank, b: RouteRank): number => {
  for (let index = 0; index < Math.min(a.parts.length, b.parts.length); index++) {
    const order = compareParts(a.parts[index]!, b.parts[index]!);
    if (order !== 0) return order;
  }
  return b.parts.length - a.parts.length;
};

const compareParts = (a: Part, b: Part): number => {
  if (a.kind === 'static' || b.kind === 'static') return (a.kind === 'static' ? 0 : 1) - (b.kind === 'static' ? 0 : 1);
  const { weight: x } = a;
  const { weight: y } = b;
  return (
    x.staticCount - y.staticCount ||
    compareLists(x.statics, y.statics, (p, q) => p[0] - q[0] || p[1] - q[1]) ||
    x.argumentCount - y.argumentCount ||
    compareLists(x.arguments, y.arguments, (p, q) => p - q)
  );
};

/** Python's ordering of lists: item by item, a prefix first. */
const compareLists = <T>(a: readonly T[], b: readonly T[], compare: (p: T, q: T) => number): number => {
  for (let index = 0; index < Math.min(a.length, b.length); index++) {
    const order = compare(a[index]!, b[index]!);
    if (order !== 0) return order;
  }
  return a.length - b.length;
};
