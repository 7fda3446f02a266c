import { createHash } from 'node:crypto';
import { deterministicPath, pfnFromProtocol } from '../rse/lfn2pfn.ts';
import type { RseProtocol } from '../rse/protocol.ts';
import { isValidName } from '../shared/names.ts';
import { InvalidPath } from '../shared/errors.ts';
import type { DidRef } from '../did/did.ts';
import { isRecord } from '../shared/narrowing.ts';

/**
 * Physical file names: taking them apart the way Rucio's protocols do (`parse_pfns`), comparing
 * them with what an RSE would generate, and finding the DID a deterministic path belongs to.
 */

/**
 * Rucio's `clean_pfns` for one PFN: SRM PFNs lose their port and web-service part, signed cloud
 * URLs their signature, so PFNs written in either form compare equal.
 */
export const cleanPfn = (pfn: string): string => {
  let clean = pfn;
  if (clean.startsWith('srm')) {
    clean = clean
      .replace(/:[0-9]+\//g, '/')
      .replaceAll('/srm/managerv1?SFN=', '')
      .replaceAll('/srm/v2/server?SFN=', '')
      .replaceAll('/srm/managerv2?SFN=', '');
  }
  for (const signature of ['?GoogleAccessId', '?X-Amz']) {
    const at = clean.indexOf(signature);
    if (at >= 0) clean = clean.slice(0, at);
  }
  return clean;
};

/** The scheme of a PFN: everything before the first colon, as Rucio splits it. */
export const schemeOf = (pfn: string): string => pfn.split(':')[0]!;

export type ParsedPfn = Readonly<{
  scheme: string;
  hostname: string;
  port: number;
  /** The directory below the prefix, with a leading and a trailing slash (`/` at the top). */
  path: string;
  /** The last path component. */
  name: string;
}>;

const URL_PARTS = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)/;

const collapseSlashes = (text: string): string => text.replace(/\/{2,}/g, '/');

const normalisedPrefix = (prefix: string | null): string => {
  let normalised = collapseSlashes(prefix ?? '');
  if (!normalised.startsWith('/')) normalised = `/${normalised}`;
  if (!normalised.endsWith('/')) normalised = `${normalised}/`;
  return normalised;
};

/**
 * A PFN taken apart against one protocol (Rucio's `RSEProtocol.parse_pfns`): its host must be the
 * protocol's (unless the protocol says `localhost`), its port the protocol's (0 when absent; SRM
 * PFNs may leave it out), and its path must start with the protocol's prefix. A web-service path
 * (SRM) is skipped.
 */
export const parsePfn = (protocol: RseProtocol, pfn: string): ParsedPfn => {
  const match = URL_PARTS.exec(pfn);
  if (!match) throw new InvalidPath(`The PFN '${pfn}' is not a URL`);
  const [, scheme, netloc, rawPath] = match;
  const colon = netloc!.indexOf(':');
  const hostname = colon >= 0 ? netloc!.slice(0, colon) : netloc!;
  const portText = colon >= 0 ? netloc!.slice(colon + 1) : '';
  const port = portText === '' ? 0 : Number(portText);
  let path = collapseSlashes(rawPath!);
  const webService = webServicePathOf(protocol);
  if (webService && path.startsWith(webService)) path = path.slice(webService.length);
  const prefix = normalisedPrefix(protocol.prefix);
  if (protocol.hostname !== hostname && protocol.hostname !== 'localhost') {
    throw new InvalidPath(`Invalid hostname: provided '${hostname}', expected '${protocol.hostname}'`);
  }
  // SRM PFNs are compared cleaned, without their port (cleanPfn).
  const portless =
    portText === '' &&
    (protocol.impl.startsWith('rucio.rse.protocols.srm.') || protocol.impl.startsWith('rucio.rse.protocols.gfal.'));
  if (!portless && (!Number.isInteger(port) || protocol.port !== port))
    throw new InvalidPath(`Invalid port: provided '${portText}', expected '${protocol.port}'`);
  if (!path.startsWith(prefix)) {
    const provided = path
      .split('/')
      .slice(0, prefix.split('/').length - 1)
      .join('/');
    throw new InvalidPath(`Invalid prefix: provided '${provided}', expected '${prefix}'`);
  }
  const relative = path.slice(prefix.length).split('/');
  const name = relative.pop()!;
  let directory = relative.join('/');
  if (!directory.startsWith('/')) directory = `/${directory}`;
  if (directory !== '/' && !directory.endsWith('/')) directory = `${directory}/`;
  return { scheme: scheme!, hostname, port, path: directory, name };
};

const webServicePathOf = (protocol: RseProtocol): string | undefined => {
  const attributes = protocol.extended_attributes;
  if (!isRecord(attributes)) return undefined;
  const path = attributes.web_service_path;
  return typeof path === 'string' && path !== '' ? path : undefined;
};

/** The path a non-deterministic RSE stores for a parsed PFN: directory and name. */
export const storedPathOf = (parsed: ParsedPfn): string => `${parsed.path}${parsed.name}`;

/** The PFNs of `lfns` through each of `protocols`, cleaned: what a deterministic RSE accepts. */
export const expectedPfns = (
  protocols: readonly RseProtocol[],
  lfns: readonly DidRef[],
  algorithm: string,
): Set<string> => {
  const expected = new Set<string>();
  for (const protocol of protocols) {
    for (const { scope, name } of lfns)
      expected.add(cleanPfn(pfnFromProtocol(protocol, deterministicPath(scope, name, algorithm))));
  }
  return expected;
};

const HASH_PART = /^[0-9a-f]{2}$/;

const scopeFromParts = (parts: readonly string[]): string | undefined => {
  const [first] = parts;
  if (!first) return undefined;
  if (parts.length > 1 && !first.startsWith('user') && !first.startsWith('group')) return undefined;
  const scope = parts.join('.');
  return isValidName('scope', scope) ? scope : undefined;
};

/**
 * The DIDs whose deterministic path (`deterministicPath`) could be `path` (relative to the
 * prefix). Names may hold slashes and `user.`/`group.` scopes become directories, so a path can
 * split several ways: `hash` keeps the splits whose md5 matches the two hash directories,
 * `identity` keeps every split into a valid scope and name. Rucio itself only takes the first
 * directory as the scope and the last component as the name, which breaks both cases.
 */
export const didCandidatesOfPath = (path: string, algorithm: string): DidRef[] => {
  const parts = path.replace(/^\/+/, '').split('/');
  const candidates: DidRef[] = [];
  if (algorithm === 'hash') {
    for (let index = 1; index + 2 < parts.length; index += 1) {
      const [first, second] = [parts[index]!, parts[index + 1]!];
      if (!HASH_PART.test(first) || !HASH_PART.test(second)) continue;
      const scope = scopeFromParts(parts.slice(0, index));
      const name = parts.slice(index + 2).join('/');
      if (!scope || !isValidName('name', name)) continue;
      if (createHash('md5').update(`${scope}:${name}`, 'utf8').digest('hex').slice(0, 4) === `${first}${second}`) {
        candidates.push({ scope, name });
      }
    }
    return candidates;
  }
  for (let index = 1; index < parts.length; index += 1) {
    const scope = scopeFromParts(parts.slice(0, index));
    const name = parts.slice(index).join('/');
    if (scope && isValidName('name', name)) candidates.push({ scope, name });
  }
  return candidates;
};
