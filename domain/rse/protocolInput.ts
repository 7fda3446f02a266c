import { InvalidObject } from '../shared/errors.ts';
import {
  isPlainObject,
  noPriorities,
  withPriorities,
  type PrioritySetting,
  type ProtocolKey,
  type RseProtocol,
} from './protocol.ts';

/**
 * What a request says of a protocol, its values already typed by the route's schema
 * (api/routes/rse/rseProtocolParams.ts): a key is absent when the request does not name it, null
 * when it names it empty. The rules here are the ones a type cannot state, checked the way
 * Rucio's add_protocol / update_protocols check them; the schema's scheme is a path variable (or
 * an import's key), so these rules run once it is known.
 */
export type ProtocolRequest = Readonly<{
  hostname?: string | null;
  port?: number | null;
  prefix?: string | null;
  impl?: string | null;
  /** Free JSON (srm keeps `web_service_path` here). */
  extended_attributes?: unknown;
  /** The request's `domains`, one setting per domain and operation it names, in its order. */
  priorities: readonly PrioritySetting[];
}>;

/** srm endpoints need their web service path (Rucio checks the stored text for the key). */
const requireSrmWebServicePath = (scheme: string, extendedAttributes: unknown): void => {
  if (scheme !== 'srm') return;
  const present = isPlainObject(extendedAttributes)
    ? 'web_service_path' in extendedAttributes
    : typeof extendedAttributes === 'string' && extendedAttributes.includes('web_service_path');
  if (!present)
    throw new InvalidObject('Missing values! For SRM, extended_attributes and web_service_path must be specified');
};

/** Rucio's posix implementation reads `file` PFNs on the machine itself. */
const isLocalFiles = (scheme: string, impl: string | null | undefined): boolean =>
  scheme === 'file' || (impl ?? '').startsWith('rucio.rse.protocols.posix.');

/** `/`, then names separated by single slashes, none `.` or `..`; one trailing slash allowed. */
const isAbsoluteNormalisedPath = (path: string): boolean => {
  if (!path.startsWith('/')) return false;
  const names = path.slice(1).replace(/\/$/, '');
  return names === '' || names.split('/').every((name) => name !== '' && name !== '.' && name !== '..');
};

/**
 * The prefix of a protocol on this machine's files is the directory the posix tool and the
 * deletion daemons stay inside: it must be an absolute normalised path (a stricter check than
 * Rucio's, recorded in docs/compatibility.md). Absent (null) stays allowed, as in Rucio; those
 * tools then refuse the protocol until it has one.
 */
const requireLocalPrefix = (scheme: string, impl: string | null | undefined, prefix: string | null): void => {
  if (prefix === null || !isLocalFiles(scheme, impl) || isAbsoluteNormalisedPath(prefix)) return;
  throw new InvalidObject(
    `Problem validating protocol: the prefix '${prefix}' of a protocol on local files must be an absolute normalised path (starting with '/', without '.', '..' or empty names)`,
  );
};

/** What identifies the protocol a request names: hostname defaults to `localhost`, port to 0. */
export const protocolKeyFromRequest = (scheme: string, request: ProtocolRequest): ProtocolKey => ({
  scheme,
  hostname: request.hostname ?? 'localhost',
  port: request.port ?? 0,
});

/** `POST /rses/{rse}/protocols/{scheme}`: a whole new protocol; impl is required. */
export const protocolFromRequest = (scheme: string, request: ProtocolRequest): RseProtocol => {
  const extendedAttributes = request.extended_attributes ?? null;
  requireSrmWebServicePath(scheme, extendedAttributes);
  const impl = request.impl;
  if (!impl) throw new InvalidObject('Missing values!');
  const prefix = request.prefix ?? null;
  requireLocalPrefix(scheme, impl, prefix);
  return {
    ...protocolKeyFromRequest(scheme, request),
    prefix,
    impl,
    domains: withPriorities(noPriorities(), request.priorities),
    extended_attributes: extendedAttributes,
  };
};

export type ProtocolChanges = Readonly<{
  prefix?: string | null;
  impl?: string;
  extended_attributes?: unknown;
  priorities: readonly PrioritySetting[];
}>;

/**
 * `PUT /rses/{rse}/protocols/{scheme}...`: prefix, impl, extended attributes and priorities may
 * change. Scheme, hostname and port identify the protocol and stay as they are (the route refuses
 * them; an import names them to find the protocol).
 */
export const protocolChangesFromRequest = (request: ProtocolRequest, scheme: string): ProtocolChanges => {
  const changes: {
    prefix?: string | null;
    impl?: string;
    extended_attributes?: unknown;
    priorities: readonly PrioritySetting[];
  } = { priorities: request.priorities };
  if (request.prefix !== undefined) changes.prefix = request.prefix;
  if (request.impl !== undefined) {
    if (!request.impl) throw new InvalidObject('Missing values: impl cannot be null');
    changes.impl = request.impl;
  }
  if (request.extended_attributes !== undefined) changes.extended_attributes = request.extended_attributes;
  if (changes.prefix !== undefined) requireLocalPrefix(scheme, changes.impl, changes.prefix);
  return changes;
};

export const applyProtocolChanges = (protocol: RseProtocol, changes: ProtocolChanges): RseProtocol => {
  const next: RseProtocol = { ...protocol, domains: withPriorities(protocol.domains, changes.priorities) };
  if (changes.prefix !== undefined) next.prefix = changes.prefix;
  if (changes.impl !== undefined) next.impl = changes.impl;
  if (changes.extended_attributes !== undefined) next.extended_attributes = changes.extended_attributes;
  return next;
};
