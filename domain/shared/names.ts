import { InvalidObject } from './errors.ts';

/**
 * Rucio's name rules (lib/rucio/common/schema/generic.py, single-VO). A violation is an
 * InvalidObject with Rucio's "Problem validating <schema>: ..." message.
 */
export const NAME_RULES = {
  account: { pattern: /^[a-z0-9-_]+$/, maxLength: 25 },
  scope: { pattern: /^[a-zA-Z_\-.0-9]+$/, maxLength: 25 },
  name: { pattern: /^[/A-Za-z0-9][/A-Za-z0-9.\-_]*$/, maxLength: 250 },
  rse: { pattern: /^([A-Z0-9]+([_-][A-Z0-9]+)*)$/, maxLength: 255 },
  account_attribute: { pattern: /^[a-zA-Z0-9\-_\\/.]{1,30}$/, maxLength: 30 },
} as const;

/**
 * C0 and C1 control characters and DEL (Unicode's Cc: U+0000–U+001F, U+007F–U+009F): never part of a name, key or path. Refused wherever a
 * name comes in, never stripped or cut at.
 */
export const CONTROL_CHARACTERS = /\p{Cc}/u;

/**
 * Keys that name a property every JavaScript object has: as the key of a map kept in an object
 * (config sections, metadata, filters, attributes) they would reach the prototype instead of an
 * entry, so they are refused wherever a client names a key.
 */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * What is wrong with a key a client names (a metadata key, a config section or option, a filter,
 * an attribute): empty, longer than `maxLength`, control characters, a prototype key, a leading
 * `$`; undefined when nothing is.
 */
export const keyProblem = (key: string, maxLength: number): string | undefined => {
  if (key === '') return 'is empty';
  if (key.length > maxLength) return `is longer than ${maxLength} characters`;
  if (CONTROL_CHARACTERS.test(key)) return 'holds control characters';
  if (PROTOTYPE_KEYS.has(key)) return 'is reserved';
  // MongoDB reads a leading `$` as an operator, in filters and in stored documents alike.
  if (key.startsWith('$')) return "starts with '$'";
  return undefined;
};

export type NameKind = keyof typeof NAME_RULES;

type NameRule = Readonly<{ pattern: RegExp; maxLength: number }>;

const CLIMB_FREE = /^\/?(?!\.\.?(?:\/|$))[^/]+(?:\/(?!\.\.?(?:\/|$))[^/]+)*$/;

/**
 * Where a scope or a name has a path segment that does not name a directory or file of its own:
 * `.`, `..`, or an empty one (`a//b`, a trailing `/`). A DID's name and its scope become a path
 * below an RSE's prefix (`<prefix>/<scope>/<hash>/<name>`); such a segment would make it climb out
 * of it or alias another. A name may start with one `/` (absolute names such as DIRAC's
 * `/vo/dir/file`): that is not an empty segment. Refused whatever the schema's pattern says.
 */
export const pathSegmentProblem = (value: string): string | undefined => {
  // The common case in one linear pass (listings ask for every file): names of non-empty
  // segments, none of them `.` or `..`, after at most one leading `/`.
  if (CLIMB_FREE.test(value)) return undefined;
  const segments = (value.startsWith('/') ? value.slice(1) : value).split('/');
  for (const segment of segments) {
    if (segment === '.' || segment === '..') return `holds the path segment '${segment}'`;
    if (segment === '') return 'holds an empty path segment';
  }
  return undefined;
};

/**
 * The directories a scope becomes below an RSE's prefix: `user.jdoe` is `user/jdoe`, as Rucio's
 * lfn2pfn splits scopes starting with `user` or `group` on dots; other scopes are one directory.
 */
export const scopeDirectories = (scope: string): string =>
  scope.startsWith('user') || scope.startsWith('group') ? scope.replaceAll('.', '/') : scope;

/**
 * What is wrong with a scope or a DID name as a path (see `pathSegmentProblem`); a scope is
 * checked as the directories it becomes, and may not start with `/`.
 */
export const climbProblem = (kind: 'scope' | 'name', value: string): string | undefined => {
  if (kind === 'name') return pathSegmentProblem(value);
  const directories = scopeDirectories(value);
  if (directories.startsWith('/')) return 'holds an empty path segment';
  return pathSegmentProblem(directories);
};

/** True when a DID's scope or name would not stay below an RSE's prefix as a path. */
export const climbs = (scope: string, name: string): boolean =>
  climbProblem('scope', scope) !== undefined || climbProblem('name', name) !== undefined;

/**
 * Why a replica would not stay below its RSE's prefix: its scope or name, or its stored path (on a
 * non-deterministic RSE) has a `.`, `..` or empty segment. Only data stored before names were
 * checked can; the daemons leave such a replica alone with this reason.
 */
export const replicaClimbReason = (scope: string, name: string, path: string | null): string | undefined => {
  const problem =
    climbProblem('scope', scope) ??
    climbProblem('name', name) ??
    (path === null ? undefined : pathSegmentProblem(path));
  return problem === undefined
    ? undefined
    : `its scope, name or path ${problem}: it would not stay below the RSE's prefix, so it is left alone`;
};

const SEGMENTS_RULE = "names are paths below an RSE's prefix: no '.', '..' or empty segments";

/** Rucio's "Problem validating <kind>: ..." for a value that breaks `rule` or climbs; undefined when fine. */
const problemOf = (kind: NameKind, rule: NameRule, value: string): string | undefined => {
  if (value.length > rule.maxLength) return `'${value}' is too long (at most ${rule.maxLength} characters)`;
  if (!rule.pattern.test(value)) return `'${value}' does not match '${rule.pattern.source}'`;
  if (kind === 'scope' || kind === 'name') {
    const climb = climbProblem(kind, value);
    if (climb) return `'${value}' ${climb} (${SEGMENTS_RULE})`;
  }
  return undefined;
};

/** What is wrong with a value of `kind` by the generic rules (pattern, length, path segments); undefined when it is valid. */
export const valueProblem = (kind: NameKind, value: string): string | undefined =>
  problemOf(kind, NAME_RULES[kind], value);

/** The message of the InvalidObject a value that breaks the generic rules gets; undefined when it is valid. */
export const nameProblem = (kind: NameKind, value: string): string | undefined => {
  const problem = valueProblem(kind, value);
  return problem === undefined ? undefined : `Problem validating ${kind}: ${problem}`;
};

export const isValidName = (kind: NameKind, value: string): boolean => nameProblem(kind, value) === undefined;

export const assertValidName = (kind: NameKind, value: string): void => {
  const problem = nameProblem(kind, value);
  if (problem !== undefined) throw new InvalidObject(problem);
};

/**
 * A policy schema's rules for scopes and DID names (Rucio's `SCOPE` and `NAME` of
 * lib/rucio/common/schema/<policy>.py), chosen by `policy.schema`. Every schema offered here is
 * at most as permissive as the generic one, whose patterns the routes check at the edge.
 */
export type NameSchema = Readonly<{ schema: string; scope: NameRule; name: NameRule }>;

const GENERIC: NameSchema = { schema: 'generic', scope: NAME_RULES.scope, name: NAME_RULES.name };

const NAME_SCHEMAS: ReadonlyMap<string, NameSchema> = new Map([
  ['generic', GENERIC],
  // Multi-VO: a scope's internal form carries `@<vo>` within 29 characters, leaving the client 25.
  ['generic_multi_vo', { ...GENERIC, schema: 'generic_multi_vo' }],
  // ATLAS's policy package: names without `/`.
  [
    'atlas',
    { schema: 'atlas', scope: NAME_RULES.scope, name: { pattern: /^[A-Za-z0-9][A-Za-z0-9.\-_]*$/, maxLength: 250 } },
  ],
]);

/** The schema `policy.schema` names; the generic one for a name not offered here. */
export const nameSchemaOf = (configured: string): NameSchema => NAME_SCHEMAS.get(configured) ?? GENERIC;

/** Refuses a scope the schema does not allow, or that climbs, with Rucio's InvalidObject. */
export const assertScopeAllowed = (schema: NameSchema, scope: string): void => {
  const problem = problemOf('scope', schema.scope, scope);
  if (problem !== undefined) throw new InvalidObject(`Problem validating scope: ${problem}`);
};

/** Refuses a DID whose scope or name the schema does not allow, or that climbs, with Rucio's InvalidObject. */
export const assertDidAllowed = (schema: NameSchema, scope: string, name: string): void => {
  assertScopeAllowed(schema, scope);
  const problem = problemOf('name', schema.name, name);
  if (problem !== undefined) throw new InvalidObject(`Problem validating name: ${problem}`);
};
