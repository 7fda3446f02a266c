import { InvalidObject, InvalidPath, InvalidType } from '../shared/errors.ts';
import { isLifetime } from '../shared/limits.ts';
import { compilePythonRegex, type StartMatcher } from '../subscription/filterPatterns.ts';

/** The scope extraction algorithms Rucio ships; `def` for any other name. */
export const SCOPE_CONVENTIONS = ['def', 'dirac'] as const;
export type ScopeConvention = (typeof SCOPE_CONVENTIONS)[number];

/**
 * What DIRAC's file catalogue plugin means by a logical file name (Rucio's core/dirac.py): an
 * absolute path `/<vo>/<scope>/<directories>/<file>` whose parent directory is the file's dataset
 * and whose every directory above that is a container, up to the VO's top container `/<vo>`. The
 * name of every DID is its whole path; its scope is read from the path by the configured
 * convention.
 */

/**
 * Rucio's scope extraction algorithms. `dirac`: the second path element (`/belle/mc/...`: `mc`),
 * the first for a path of one element (`/belle`: `belle`). `def`: the text before a colon, else
 * before the first dot (`user.jdoe.x`: `user.jdoe`, as for `group.`).
 */
export const extractScope = (did: string, convention: ScopeConvention): string => {
  if (convention === 'dirac') {
    const elements = did.replace(/\/+$/, '').split('/');
    return (elements.length > 2 ? elements[2] : elements[1]) ?? '';
  }
  const colon = did.indexOf(':');
  if (colon >= 0) return did.slice(0, colon);
  const parts = did.split('.');
  return did.startsWith('user') || did.startsWith('group') ? parts.slice(0, 2).join('.') : parts[0]!;
};

/** Where a file sits: its dataset (the parent directory) and the containers above it, nearest first, the VO's top last. */
export type DiracHierarchy = Readonly<{ dataset: string; containers: readonly string[] }>;

/**
 * The dataset and containers of an LFN. It must be an absolute path without empty, `.` or `..`
 * elements (each element is a DID of its own, and the whole a path below RSEs' prefixes) and with at least a VO and one directory above the file (`/<vo>/<dir>/<file>`): a file needs a
 * dataset, and a dataset a container to sit in.
 */
export const diracHierarchy = (lfn: string): DiracHierarchy => {
  const elements = lfn.split('/');
  if (
    elements[0] !== '' ||
    elements.slice(1).some((element) => element === '' || element === '.' || element === '..') ||
    elements.length < 4
  )
    throw new InvalidPath(
      `The LFN '${lfn}' is not a path /<vo>/<directory>/.../<file>: DIRAC files sit in a dataset (their directory) inside the VO's container.`,
    );
  const directories = elements.slice(0, -1);
  const paths = directories.map((_, index) => directories.slice(0, index + 1).join('/')).slice(1);
  paths.reverse();
  return { dataset: paths[0]!, containers: paths.slice(1) };
};

/** The lifetimes of `dirac.lifetime`: a pattern matched from the start of a dataset's scope, and seconds. */
export type DiracLifetimes = readonly Readonly<{ pattern: string; matches: StartMatcher; seconds: number }>[];

/** Reads `dirac.lifetime` (a JSON object of patterns to seconds); anything else is InvalidType, as in Rucio. */
export const parseDiracLifetimes = (text: string): DiracLifetimes => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidType(
      `The configuration option dirac.lifetime is not JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new InvalidType(
      'The configuration option dirac.lifetime must be a JSON object of scope patterns to seconds.',
    );
  return Object.entries(value).map(([pattern, seconds]) => {
    if (!isLifetime(seconds) || seconds <= 0)
      throw new InvalidType(`dirac.lifetime: the lifetime of '${pattern}' is not a number of seconds.`);
    let matches: StartMatcher;
    try {
      matches = compilePythonRegex(pattern, `the pattern of dirac.lifetime`);
    } catch (error) {
      if (error instanceof InvalidObject)
        throw new InvalidType(`dirac.lifetime: '${pattern}' is not a regular expression.`);
      throw error;
    }
    return { pattern, matches, seconds };
  });
};

/** The lifetime of the rule a new dataset of `scope` gets: the first pattern matching the scope's start; null for none. */
export const diracLifetimeOf = (lifetimes: DiracLifetimes, scope: string): number | null =>
  lifetimes.find((lifetime) => lifetime.matches(scope))?.seconds ?? null;
