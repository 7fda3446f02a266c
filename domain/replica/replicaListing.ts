import { didKey, type DidRef } from '../did/did.ts';
import { pfnFromProtocol, replicaPath } from '../rse/lfn2pfn.ts';
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
  /** The `sign_url` attribute: the service (`s3`, `gcs`, `swift`) that signs this RSE's https PFNs for root. */
  signUrl?: string;
}>;

export type DomainChoice = 'wan' | 'lan' | 'all';

export type ListingProtocol = Readonly<{ domain: ProtocolDomain; protocol: RseProtocol; priority: number }>;

/**
 * The read protocols a listing builds PFNs with on one RSE: without `schemes`, the best one per
 * domain; with `schemes`, the best one of each listed scheme the RSE serves (others are skipped);
 * then the `additional` schemes not chosen yet (`root` for archives, which xrootd reads inside).
 * `all` means both domains.
 */
export const listingProtocols = (
  rse: ListingRse,
  domain: DomainChoice,
  schemes: readonly string[] | undefined,
  additional: readonly string[] = [],
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
  for (const scheme of new Set([...chosen, ...additional])) {
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
  /**
   * Set when this is a replica of an archive holding the file (`resolve_archives`): its PFNs are
   * the archive's, asking for the file inside (`xrdcl.unzip`), in the `zip` domain.
   */
  archive?: DidRef;
}>;

/** A PFN before signing and numbering, with what made it. */
type RawPfn = Readonly<{
  pfn: string;
  rse: ListingRse;
  domain: ProtocolDomain;
  protocol: RseProtocol;
  priority: number;
  archive: DidRef | undefined;
}>;

/**
 * A PFN as given back by signing: the signed URL, or null when it cannot be signed (no keys), in
 * which case the listing leaves it out, as Rucio does.
 */
export type SignedPfns = (rse: ListingRse, pfn: string) => string | null;

/** The PFNs of a file's replicas, each from the file's own path or, for an archive's replica, the archive's. */
function* rawPfns(file: FileFacts, replicas: readonly ListedReplica[]): Generator<RawPfn> {
  const paths = new Map<string, string | undefined>();
  for (const { rse, path, protocols, archive } of replicas) {
    const target = archive ?? file;
    for (const { domain, protocol, priority } of protocols) {
      // A replica whose name or stored path would climb out of the prefix has no PFN to give.
      const key = `${rse.deterministic ? rse.lfn2pfnAlgorithm : `path ${path}`} ${didKey(target.scope, target.name)}`;
      if (!paths.has(key)) paths.set(key, replicaPath(rse, target.scope, target.name, path));
      const filePath = paths.get(key);
      if (filePath === undefined) continue;
      yield { pfn: pfnFromProtocol(protocol, filePath), rse, domain, protocol, priority, archive };
    }
  }
}

/** Rucio signs the https PFNs of RSEs with a `sign_url` attribute, for callers allowed to sign. */
const needsSigning = (raw: RawPfn): boolean => raw.rse.signUrl !== undefined && raw.protocol.scheme === 'https';

/** The PFNs of a listing line that signing would change (asked for before `listedFile`, which is synchronous). */
export const pfnsToSign = (file: FileFacts, replicas: readonly ListedReplica[]): { rse: ListingRse; pfn: string }[] =>
  [...rawPfns(file, replicas)].filter(needsSigning).map(({ rse, pfn }) => ({ rse, pfn }));

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A file and its replicas as one listing line. PFNs are ordered by domain (lan before wan), then
 * protocol priority, then text, and numbered from 1; `rses` lists each RSE's PFNs in that order.
 * A replica on a non-deterministic RSE without a stored path has no PFN.
 */
export const listedFile = (file: FileFacts, replicas: readonly ListedReplica[], signed?: SignedPfns): ListedFile => {
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
  for (const { rse, state } of replicas) listed.states[rse.rse] = state;
  // A PFN served in both domains keeps the entry of the last protocol, as Rucio's dict does.
  const byPfn = new Map<string, PfnEntry>();
  for (const raw of rawPfns(file, replicas)) {
    const { rse, domain, protocol, archive } = raw;
    let pfn: string | null = raw.pfn;
    if (signed && needsSigning(raw)) pfn = signed(rse, pfn);
    if (pfn === null) continue;
    let entry: PfnEntry = {
      rse_id: rse.id,
      rse: rse.rse,
      type: rse.rseType,
      volatile: rse.volatile,
      domain,
      priority: raw.priority,
      client_extract: false,
    };
    if (archive) {
      pfn = withQuery(pfn, 'xrdcl.unzip', file.name);
      // xrootd reads a file inside an archive itself: its PFN comes first, and the client extracts nothing.
      entry =
        protocol.scheme === 'root'
          ? { ...entry, domain: 'zip', priority: -1 }
          : { ...entry, domain: 'zip', client_extract: true };
    }
    byPfn.set(pfn, entry);
    if (protocol.scheme === 'srm') listed.space_token = spaceTokenOf(protocol);
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

/** Bytes Python's `quote_plus` leaves as they are. */
const UNRESERVED = /^[A-Za-z0-9_.~-]$/;

/** Python's `quote_plus` with no safe characters: UTF-8, percent-encoded, a space as `+`. */
const quotePlus = (text: string): string =>
  [...new TextEncoder().encode(text)]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      if (char === ' ') return '+';
      return UNRESERVED.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');

/** Python's `unquote_plus`, keeping malformed escapes as they are. */
const unquotePlus = (text: string): string => {
  const spaced = text.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
};

/**
 * Rucio's `add_url_query`: the URL's query read as pairs (`parse_qsl`: pairs without a value
 * dropped, a repeated name keeping its last value in its first place), the pair set, and the whole
 * query written again with `urlencode`.
 */
export const withQuery = (url: string, key: string, value: string): string => {
  const hash = url.indexOf('#');
  const fragment = hash >= 0 ? url.slice(hash) : '';
  const beforeFragment = hash >= 0 ? url.slice(0, hash) : url;
  const question = beforeFragment.indexOf('?');
  const base = question >= 0 ? beforeFragment.slice(0, question) : beforeFragment;
  const query = new Map<string, string>();
  if (question >= 0) {
    for (const pair of beforeFragment.slice(question + 1).split('&')) {
      const equals = pair.indexOf('=');
      if (equals < 0 || equals === pair.length - 1) continue;
      query.set(unquotePlus(pair.slice(0, equals)), unquotePlus(pair.slice(equals + 1)));
    }
  }
  query.set(key, value);
  const encoded = [...query].map(([name, text]) => `${quotePlus(name)}=${quotePlus(text)}`).join('&');
  return `${base}?${encoded}${fragment}`;
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
