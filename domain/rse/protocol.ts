/**
 * An access protocol of an RSE. `(scheme, hostname, port)` identifies it. Each domain and
 * operation has a priority: an integer ≥ 0 where lower is preferred, or null when the protocol
 * does not serve that operation.
 */
export const PROTOCOL_DOMAINS = ['lan', 'wan'] as const;
export type ProtocolDomain = (typeof PROTOCOL_DOMAINS)[number];

export const PROTOCOL_OPERATIONS = [
  'read',
  'write',
  'delete',
  'third_party_copy_read',
  'third_party_copy_write',
] as const;
export type ProtocolOperation = (typeof PROTOCOL_OPERATIONS)[number];

export type Priority = number | null;

export type ProtocolDomains = {
  lan: { read: Priority; write: Priority; delete: Priority };
  wan: {
    read: Priority;
    write: Priority;
    delete: Priority;
    third_party_copy_read: Priority;
    third_party_copy_write: Priority;
  };
};

export type RseProtocol = {
  scheme: string;
  hostname: string;
  port: number;
  prefix: string | null;
  impl: string;
  domains: ProtocolDomains;
  /** Free JSON (srm keeps `web_service_path` here). */
  extended_attributes: unknown;
};

export type ProtocolKey = Pick<RseProtocol, 'scheme' | 'hostname' | 'port'>;

export const sameProtocolKey = (protocol: ProtocolKey, key: ProtocolKey): boolean =>
  protocol.scheme === key.scheme && protocol.hostname === key.hostname && protocol.port === key.port;

export const noPriorities = (): ProtocolDomains => ({
  lan: { read: null, write: null, delete: null },
  wan: { read: null, write: null, delete: null, third_party_copy_read: null, third_party_copy_write: null },
});

/**
 * One priority to set, as a request's `domains` object names it (a known domain and operation, a
 * priority that is an integer ≥ 0 or null: api/routes/rse/rseProtocolParams.ts checks them).
 */
export type PrioritySetting = Readonly<{ domain: ProtocolDomain; operation: ProtocolOperation; priority: Priority }>;

/**
 * Applies priority settings. Rucio stores third-party-copy priorities in one column per
 * operation whatever the domain named in the request, so a `lan` third-party-copy priority lands
 * on the only place they are shown: `wan`.
 */
export const withPriorities = (domains: ProtocolDomains, settings: readonly PrioritySetting[]): ProtocolDomains => {
  const next: ProtocolDomains = { lan: { ...domains.lan }, wan: { ...domains.wan } };
  for (const { domain, operation, priority } of settings) {
    if (operation === 'third_party_copy_read' || operation === 'third_party_copy_write') next.wan[operation] = priority;
    else next[domain][operation] = priority;
  }
  return next;
};

export const priorityOf = (protocol: RseProtocol, domain: ProtocolDomain, operation: ProtocolOperation): Priority =>
  (protocol.domains[domain] as Record<string, Priority>)[operation] ?? null;

/** Protocols are listed by hostname, scheme and port, as Rucio sorts them. */
export const compareProtocols = (a: ProtocolKey, b: ProtocolKey): number =>
  compareText(a.hostname, b.hostname) || compareText(a.scheme, b.scheme) || a.port - b.port;

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
