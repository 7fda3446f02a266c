import type { FileRegistration } from '../did/didCreation.ts';
import { didKey, type DidRef } from '../did/did.ts';
import type { RseProtocol } from '../rse/protocol.ts';
import { protocolsFor, selectProtocol } from '../rse/protocolSelection.ts';
import {
  InvalidPath,
  ResourceTemporaryUnavailable,
  RSEProtocolNotSupported,
  UnsupportedOperation,
} from '../shared/errors.ts';
import { cleanPfn, expectedPfns, parsePfn, schemeOf, storedPathOf } from './pfns.ts';
import { OBSOLETE_TOMBSTONE, type ReplicaState } from './replica.ts';

/**
 * The checks Rucio's `add_replicas` makes once per request on the target RSE, and what each new
 * replica gets from it: its stored path, state and tombstone. Pure: the RSE's facts come in.
 */

/** A file as `add_replicas` describes it: the file's facts plus where and how the replica is. */
export type ReplicaFile = FileRegistration & Readonly<{ pfn?: string; state?: ReplicaState }>;

/** What registration needs to know of the target RSE. */
export type RegistrationRse = Readonly<{
  rse: string;
  rseId: string;
  volatile: boolean;
  deterministic: boolean;
  availabilityWrite: boolean;
  lfn2pfnAlgorithm: string;
  protocols: readonly RseProtocol[];
  /** The RSE's `tombstone_delay` attribute, as stored. */
  tombstoneDelay: unknown;
}>;

/** How one new replica will be recorded. */
export type PlannedReplica = Readonly<{ path: string | null; state: ReplicaState; tombstone: string | null }>;

/**
 * `tombstone_delay` seconds from now: none or 0 protects new replicas (null), a negative delay
 * makes them obsolete at once. A value that is not a whole number counts as none.
 */
export const tombstoneFromDelay = (delay: unknown, now: Date): string | null => {
  const seconds =
    typeof delay === 'number' ? delay : typeof delay === 'string' && /^\s*[+-]?\d+\s*$/.test(delay) ? Number(delay) : 0;
  if (!Number.isInteger(seconds) || seconds === 0) return null;
  if (seconds < 0) return OBSOLETE_TOMBSTONE;
  return new Date(now.getTime() + seconds * 1000).toISOString();
};

const pythonList = (items: Iterable<string>): string => `[${[...items].map((item) => `'${item}'`).join(', ')}]`;

const protocolsOrNone = (protocols: readonly RseProtocol[], domain: 'wan' | 'lan', scheme: string): RseProtocol[] => {
  try {
    return protocolsFor(protocols, { operation: 'write', domain, scheme });
  } catch (error) {
    if (error instanceof RSEProtocolNotSupported) return [];
    throw error;
  }
};

/**
 * Refuses the whole request when the RSE cannot take it: a volatile RSE (UnsupportedOperation),
 * one not writable unless `ignoreAvailability` (ResourceTemporaryUnavailable), a PFN missing on
 * a non-deterministic RSE (UnsupportedOperation), a PFN a deterministic RSE would not have
 * generated with its write protocols, WAN then LAN (InvalidPath, behaviour rule 8), or a PFN that
 * a non-deterministic RSE's write protocol cannot take apart (InvalidPath).
 */
export const planReplicas = (
  rse: RegistrationRse,
  files: readonly ReplicaFile[],
  options: { ignoreAvailability: boolean; now: Date },
): Map<string, PlannedReplica> => {
  if (rse.volatile) throw new UnsupportedOperation(`Cannot add replicas on volatile RSE ${rse.rse} `);
  if (!rse.availabilityWrite && !options.ignoreAvailability)
    throw new ResourceTemporaryUnavailable(`${rse.rse} is temporary unavailable for writing`);
  if (!rse.deterministic && files.some((file) => file.pfn === undefined)) {
    throw new UnsupportedOperation(`PFN needed for this (non deterministic) RSE ${rse.rse} `);
  }
  const paths = new Map<string, string>();
  const byScheme = new Map<string, ReplicaFile[]>();
  for (const file of files) {
    if (file.pfn === undefined) continue;
    const scheme = schemeOf(file.pfn);
    const sameScheme = byScheme.get(scheme);
    if (sameScheme) sameScheme.push(file);
    else byScheme.set(scheme, [file]);
  }
  for (const [scheme, withPfns] of byScheme) {
    if (!rse.deterministic) {
      const protocol = selectProtocol(rse.protocols, { operation: 'write', domain: 'wan', scheme });
      for (const file of withPfns)
        paths.set(didKey(file.scope, file.name), storedPathOf(parsePfn(protocol, file.pfn!)));
      continue;
    }
    checkDeterministicPfns(rse, scheme, withPfns);
  }
  const tombstone = tombstoneFromDelay(rse.tombstoneDelay, options.now);
  const planned = new Map<string, PlannedReplica>();
  for (const file of files) {
    const key = didKey(file.scope, file.name);
    planned.set(key, { path: paths.get(key) ?? null, state: file.state ?? 'AVAILABLE', tombstone });
  }
  return planned;
};

const checkDeterministicPfns = (rse: RegistrationRse, scheme: string, files: readonly ReplicaFile[]): void => {
  const lfns: DidRef[] = files.map(({ scope, name }) => ({ scope, name }));
  const given = new Set(files.map((file) => cleanPfn(file.pfn!)));
  const expected = expectedPfns(protocolsOrNone(rse.protocols, 'wan', scheme), lfns, rse.lfn2pfnAlgorithm);
  let unexpected = [...given].filter((pfn) => !expected.has(pfn));
  if (unexpected.length > 0) {
    for (const pfn of expectedPfns(protocolsOrNone(rse.protocols, 'lan', scheme), lfns, rse.lfn2pfnAlgorithm))
      expected.add(pfn);
    unexpected = unexpected.filter((pfn) => !expected.has(pfn));
  }
  if (unexpected.length > 0) {
    throw new InvalidPath(
      `One of the PFNs provided ${pythonList(unexpected)} for ${pythonList(lfns.map(({ scope, name }) => didKey(scope, name)))} ` +
        `does not match the Rucio expected PFNs: ${pythonList(expected)}`,
    );
  }
};
