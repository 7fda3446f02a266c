import { deterministicPath, pfnFromProtocol } from '../rse/lfn2pfn.ts';
import { priorityOf, type ProtocolDomain, type RseProtocol } from '../rse/protocol.ts';
import { protocolsFor } from '../rse/protocolSelection.ts';
import { RSEProtocolNotSupported } from '../shared/errors.ts';
import { isRecord } from '../shared/narrowing.ts';

/**
 * One line of `list_replicas`: a file with the PFNs of its replicas, built from the replicas and
 * the facts of their RSEs (Rucio's `_list_replicas` in core/replica.py). Pure: the caller reads
 * the replicas and RSEs once per request and streams files through here.
 */

/** What a replica listing needs to know of an RSE. */
export type ListingRse = Readonly<{
  id: string;
  rse: string;
  rseType: string;
  volatile: boolean;
  deterministic: boolean;
  lfn2pfnAlgorithm: string;
  protocols: readonly RseProtocol[];
  latitude: number | null;
  longitude: number | null;
}>;

export type DomainChoice = 'wan' | 'lan' | 'all';

export type ListingProtocol = Readonly<{ domain: ProtocolDomain; protocol: RseProtocol; priority: number }>;

/**
 * The read protocols a listing builds PFNs with on one RSE: without `schemes`, the best one per
 * domain; with `schemes`, the best one of each listed scheme the RSE serves (others are skipped).
 * `all` means both domains.
 */
export const listingProtocols = (
  rse: ListingRse,
  domain: DomainChoice,
  schemes: readonly string[] | undefined,
): ListingProtocol[] => {
  const domains: ProtocolDomain[] = domain === 'all' ? ['wan', 'lan'] : [domain];
  const best = (choice: { domain: ProtocolDomain; scheme?: string }): RseProtocol | undefined => {
    try {
      return protocolsFor(rse.protocols, { operation: 'read', ...choice })[0];
    } catch (error) {
      if (error instanceof RSEProtocolNotSupported) return undefined;
      throw error;
    }
  };
  const chosen =
    schemes && schemes.length > 0 ? schemes : domains.flatMap((each) => best({ domain: each })?.scheme ?? []);
  const protocols: ListingProtocol[] = [];
  for (const scheme of new Set(chosen)) {
    for (const each of domains) {
      const protocol = best({ domain: each, scheme });
      if (protocol) protocols.push({ domain: each, protocol, priority: priorityOf(protocol, each, 'read')! });
    }
  }
  return protocols;
};

export type PfnEntry = {
  rse_id: string;
  rse: string;
  type: string;
  volatile: boolean;
  domain: string;
  priority: number;
  client_extract: boolean;
};

export type ListedFile = {
  scope: string;
  name: string;
  bytes: number | null;
  md5: string | null;
  adler32: string | null;
  pfns: Record<string, PfnEntry>;
  rses: Record<string, string[]>;
  states: Record<string, string>;
  /** As the protocol's extended attributes give it (Rucio passes it through). */
  space_token?: unknown;
  parents?: string[];
};

export type FileFacts = Readonly<{
  scope: string;
  name: string;
  bytes: number | null;
  md5: string | null;
  adler32: string | null;
}>;

export type ListedReplica = Readonly<{
  rse: ListingRse;
  state: string;
  /** Stored path on a non-deterministic RSE. */
  path: string | null;
  protocols: readonly ListingProtocol[];
}>;

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A file and its replicas as one listing line. PFNs are ordered by domain (lan before wan), then
 * protocol priority, then text, and numbered from 1; `rses` lists each RSE's PFNs in that order.
 * A replica on a non-deterministic RSE without a stored path has no PFN.
 */
export const listedFile = (file: FileFacts, replicas: readonly ListedReplica[]): ListedFile => {
  const listed: ListedFile = {
    scope: file.scope,
    name: file.name,
    bytes: file.bytes,
    md5: file.md5,
    adler32: file.adler32,
    pfns: {},
    rses: {},
    states: {},
  };
  // A PFN served in both domains keeps the entry of the last protocol, as Rucio's dict does.
  const byPfn = new Map<string, PfnEntry>();
  const paths = new Map<string, string>();
  for (const { rse, state, path, protocols } of replicas) {
    listed.states[rse.rse] = state;
    for (const { domain, protocol, priority } of protocols) {
      let filePath: string | null = path;
      if (rse.deterministic) {
        filePath = paths.get(rse.lfn2pfnAlgorithm) ?? deterministicPath(file.scope, file.name, rse.lfn2pfnAlgorithm);
        paths.set(rse.lfn2pfnAlgorithm, filePath);
      }
      if (filePath === null) continue;
      const pfn = pfnFromProtocol(protocol, filePath);
      byPfn.set(pfn, {
        rse_id: rse.id,
        rse: rse.rse,
        type: rse.rseType,
        volatile: rse.volatile,
        domain,
        priority,
        client_extract: false,
      });
      if (protocol.scheme === 'srm') listed.space_token = spaceTokenOf(protocol);
    }
  }
  // The entries are this line's own objects: numbering them in place copies nothing.
  const pfns = byPfn.size > 1 ? [...byPfn].sort(byDomainThenPriority) : [...byPfn];
  pfns.forEach(([pfn, entry], index) => {
    entry.priority = index + 1;
    listed.pfns[pfn] = entry;
  });
  const byRse = pfns.length > 1 ? [...pfns].sort(byRseThenPriority) : pfns;
  for (const [pfn, entry] of byRse) (listed.rses[entry.rse] ??= []).push(pfn);
  return listed;
};

type Pfn = [string, PfnEntry];

const byDomainThenPriority = ([pfnA, a]: Pfn, [pfnB, b]: Pfn): number =>
  compareText(a.domain, b.domain) || a.priority - b.priority || compareText(pfnA, pfnB);

const byRseThenPriority = ([pfnA, a]: Pfn, [pfnB, b]: Pfn): number =>
  compareText(a.rse_id, b.rse_id) || a.priority - b.priority || compareText(pfnA, pfnB);

const spaceTokenOf = (protocol: RseProtocol): unknown => {
  const attributes = protocol.extended_attributes;
  if (!isRecord(attributes)) return null;
  return attributes.space_token === undefined ? null : attributes.space_token;
};
