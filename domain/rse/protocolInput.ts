import { InvalidObject } from '../shared/errors.ts';
import {
  isPlainObject,
  noPriorities,
  prioritySettings,
  withPriorities,
  type PrioritySetting,
  type ProtocolKey,
  type RseProtocol,
} from './protocol.ts';

/**
 * Protocols as requests describe them, checked the way Rucio's add_protocol / update_protocols
 * check them. Pure: the routes call these before a command is built.
 */

const optionalText = (body: Readonly<Record<string, unknown>>, key: string, fallback: string | null): string | null => {
  const value = body[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string')
    throw new InvalidObject(`Problem validating protocol: ${key} ${JSON.stringify(value)} is not of type 'string'`);
  return value;
};

const portOf = (value: unknown): number => {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new InvalidObject(`Problem validating protocol: port ${JSON.stringify(value)} is not a non-negative integer`);
  }
  return value;
};

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
export const protocolKeyFromRequest = (scheme: string, body: Readonly<Record<string, unknown>>): ProtocolKey => ({
  scheme,
  hostname: optionalText(body, 'hostname', 'localhost') ?? 'localhost',
  port: portOf(body.port),
});

/** `POST /rses/{rse}/protocols/{scheme}`: a whole new protocol; impl is required. */
export const protocolFromRequest = (scheme: string, body: Readonly<Record<string, unknown>>): RseProtocol => {
  const domains = withPriorities(noPriorities(), prioritySettings(body.domains));
  const extendedAttributes = body.extended_attributes ?? null;
  requireSrmWebServicePath(scheme, extendedAttributes);
  const impl = optionalText(body, 'impl', null);
  if (!impl) throw new InvalidObject('Missing values!');
  const prefix = optionalText(body, 'prefix', null);
  requireLocalPrefix(scheme, impl, prefix);
  return {
    ...protocolKeyFromRequest(scheme, body),
    prefix,
    impl,
    domains,
    extended_attributes: extendedAttributes,
  };
};

export type ProtocolChanges = Readonly<{
  prefix?: string | null;
  impl?: string;
  extended_attributes?: unknown;
  priorities: readonly PrioritySetting[];
}>;

const IDENTIFYING_KEYS = ['scheme', 'hostname', 'port'] as const;

/**
 * `PUT /rses/{rse}/protocols/{scheme}...`: prefix, impl, extended attributes and priorities may
 * change. Scheme, hostname and port identify the protocol and stay as they are.
 */
export const protocolChangesFromRequest = (
  body: Readonly<Record<string, unknown>>,
  scheme: string,
): ProtocolChanges => {
  const identifying = IDENTIFYING_KEYS.filter((key) => key in body);
  if (identifying.length > 0) {
    throw new InvalidObject(
      `Problem validating protocol: ${identifying.join(', ')} identify a protocol and cannot be changed`,
    );
  }
  const priorities = prioritySettings(body.domains);
  const changes: {
    prefix?: string | null;
    impl?: string;
    extended_attributes?: unknown;
    priorities: readonly PrioritySetting[];
  } = { priorities };
  if ('prefix' in body) changes.prefix = optionalText(body, 'prefix', null);
  if ('impl' in body) {
    const impl = optionalText(body, 'impl', null);
    if (!impl) throw new InvalidObject('Missing values: impl cannot be null');
    changes.impl = impl;
  }
  if ('extended_attributes' in body) changes.extended_attributes = body.extended_attributes;
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
