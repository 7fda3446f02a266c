import { hash } from 'node:crypto';
import { InvalidObject, RSEOperationNotSupported } from '../shared/errors.ts';
import { climbProblem, climbs, pathSegmentProblem, scopeDirectories } from '../shared/names.ts';
import { isPlainObject, type RseProtocol } from './protocol.ts';
import { selectProtocol, type ProtocolChoice } from './protocolSelection.ts';

/** The default of the built-in lfn2pfn algorithms (rse/translation.py), the other being `identity`. */
export const LFN2PFN_ALGORITHMS = ['hash', 'identity'] as const;
export const DEFAULT_LFN2PFN_ALGORITHM = 'hash';

const refuseClimbing = (kind: 'scope' | 'name', value: string): void => {
  const climb = climbProblem(kind, value);
  if (climb)
    throw new InvalidObject(`Problem validating ${kind}: '${value}' ${climb}: it has no path below an RSE's prefix`);
};

/**
 * The path of a file on a deterministic RSE. `hash`: `<scope>/<md5[0:2]>/<md5[2:4]>/<name>` with
 * the md5 of `<scope>:<name>`; `identity`: `<scope>/<name>` (a `user.` or `group.` scope split on
 * its dots). A scope or name with a `.`, `..` or empty path segment has no path: it would leave
 * the RSE's prefix (or alias another file), so it is refused (InvalidObject), whatever stored it.
 */
export const deterministicPath = (
  scope: string,
  name: string,
  algorithm: string = DEFAULT_LFN2PFN_ALGORITHM,
): string => {
  refuseClimbing('scope', scope);
  refuseClimbing('name', name);
  const scopePath = scopeDirectories(scope);
  switch (algorithm) {
    case 'hash': {
      // One call, no Hash object: listings compute this for every file they list.
      const md5 = hash('md5', `${scope}:${name}`, 'hex');
      return `${scopePath}/${md5.slice(0, 2)}/${md5.slice(2, 4)}/${name}`;
    }
    case 'identity':
      return `${scopePath}/${name}`;
    default:
      throw new RSEOperationNotSupported(`The lfn2pfn algorithm '${algorithm}' is not supported`);
  }
};

/**
 * The path of a replica below its RSE's prefix: computed on a deterministic RSE, the stored one
 * elsewhere. Undefined when there is none, or when it would not stay below the prefix: a scope,
 * name or stored path with a `.`, `..` or empty segment (stored before names were checked), which
 * the listings leave out and the daemons skip, saying why.
 */
export const replicaPath = (
  rse: Readonly<{ deterministic: boolean; lfn2pfnAlgorithm: string }>,
  scope: string,
  name: string,
  storedPath: string | null,
): string | undefined => {
  if (!rse.deterministic)
    return storedPath === null || pathSegmentProblem(storedPath) !== undefined ? undefined : storedPath;
  if (climbs(scope, name)) return undefined;
  return deterministicPath(scope, name, rse.lfn2pfnAlgorithm);
};

/** The prefix with exactly one leading and one trailing slash (an empty prefix is `/`). */
const normalisedPrefix = (prefix: string | null): string => {
  let normalised = prefix ?? '';
  if (!normalised.startsWith('/')) normalised = `/${normalised}`;
  if (!normalised.endsWith('/')) normalised = `${normalised}/`;
  return normalised;
};

const webServicePath = (protocol: RseProtocol): string => {
  const attributes = protocol.extended_attributes;
  return isPlainObject(attributes) && typeof attributes.web_service_path === 'string'
    ? attributes.web_service_path
    : '';
};

/**
 * A PFN from a protocol and a path below its prefix, the way the protocol's implementation
 * builds it: `scheme://host:port/prefix/path` by default; posix leaves the port out; gfal and srm
 * add the web service path and leave out a zero port.
 */
export const pfnFromProtocol = (protocol: RseProtocol, path: string): string => {
  const prefix = normalisedPrefix(protocol.prefix);
  const relative = path.startsWith('/') ? path.slice(1) : path;
  if (protocol.impl.startsWith('rucio.rse.protocols.posix.'))
    return `${protocol.scheme}://${protocol.hostname}${prefix}${relative}`;
  if (protocol.impl.startsWith('rucio.rse.protocols.gfal.') || protocol.impl.startsWith('rucio.rse.protocols.srm.')) {
    const hostname = protocol.hostname.includes('://') ? protocol.hostname.split('://')[1]! : protocol.hostname;
    const port = protocol.port ? `:${protocol.port}` : '';
    const gfalPath = protocol.scheme === 'root' ? path : relative;
    return `${protocol.scheme}://${hostname}${port}${webServicePath(protocol)}${prefix}${gfalPath}`;
  }
  return `${protocol.scheme}://${protocol.hostname}:${protocol.port}${prefix}${relative}`;
};

/**
 * The directory a PFN of one of these protocols lies in on this machine: the prefix of the
 * posix (`file`) protocol whose PFNs start as this one does (the longest such, when several do),
 * for the posix transfer tool to keep every path inside. Undefined when no posix protocol with a
 * prefix built it.
 */
export const localRootOf = (protocols: readonly RseProtocol[], pfn: string): string | undefined => {
  let root: string | undefined;
  let longest = -1;
  for (const protocol of protocols) {
    if (!protocol.impl.startsWith('rucio.rse.protocols.posix.') || !protocol.prefix) continue;
    const base = pfnFromProtocol(protocol, '');
    if (pfn.startsWith(base) && base.length > longest) {
      root = protocol.prefix;
      longest = base.length;
    }
  }
  return root;
};

export type PfnSettings = Readonly<{
  deterministic: boolean;
  lfn2pfnAlgorithm: string;
  protocols: readonly RseProtocol[];
}>;

export type Lfn = Readonly<{ scope: string; name: string }>;

/**
 * `scope:name` → PFN on one RSE, with the protocol chosen for the operation and domain. A
 * deterministic RSE computes the path; a non-deterministic one only knows the paths its replicas
 * were registered with (`storedPaths`, keyed `scope:name`), and files without one (or with one
 * that would climb out of the prefix) are left out.
 */
export const lfnsToPfns = (
  settings: PfnSettings,
  lfns: readonly Lfn[],
  choice: ProtocolChoice,
  storedPaths: ReadonlyMap<string, string> = new Map(),
): Record<string, string> => {
  const protocol = selectProtocol(settings.protocols, choice);
  const pfns: Record<string, string> = {};
  for (const { scope, name } of lfns) {
    const key = `${scope}:${name}`;
    // A deterministic RSE refuses a climbing name (InvalidObject): a client would write or read there.
    const path = settings.deterministic
      ? deterministicPath(scope, name, settings.lfn2pfnAlgorithm)
      : replicaPath(settings, scope, name, storedPaths.get(key) ?? null);
    if (path !== undefined) pfns[key] = pfnFromProtocol(protocol, path);
  }
  return pfns;
};
