import { RSEOperationNotSupported, RSEProtocolDomainNotSupported, RSEProtocolNotSupported } from '../shared/errors.ts';
import { PROTOCOL_DOMAINS, PROTOCOL_OPERATIONS, compareProtocols, priorityOf, type RseProtocol } from './protocol.ts';
import { isOneOf } from '../shared/narrowing.ts';

export type ProtocolChoice = Readonly<{
  operation: string;
  domain: string;
  /** One scheme or a comma-separated list of schemes; any scheme when absent. */
  scheme?: string | undefined;
}>;

/**
 * The protocols that serve an operation in a domain, preferred first (lowest priority number),
 * as Rucio's rsemanager orders them. Unknown operations and domains are refused first; no
 * candidate at all is RSEProtocolNotSupported.
 */
export const protocolsFor = (protocols: readonly RseProtocol[], choice: ProtocolChoice): RseProtocol[] => {
  const { operation, domain } = choice;
  if (!isOneOf(PROTOCOL_OPERATIONS, operation)) {
    throw new RSEOperationNotSupported(`Operation ${operation} is not supported`);
  }
  if (!isOneOf(PROTOCOL_DOMAINS, domain)) {
    throw new RSEProtocolDomainNotSupported(`Domain ${domain} not supported`);
  }
  const schemes = choice.scheme ? choice.scheme.split(',') : undefined;
  const candidates = protocols.filter(
    (protocol) => (!schemes || schemes.includes(protocol.scheme)) && priorityOf(protocol, domain, operation) !== null,
  );
  if (candidates.length === 0) {
    throw new RSEProtocolNotSupported(
      `No protocol for provided settings found: operation ${operation}, domain ${domain}${schemes ? `, scheme ${schemes.join(',')}` : ''}.`,
    );
  }
  return candidates.sort(
    (a, b) => priorityOf(a, domain, operation)! - priorityOf(b, domain, operation)! || compareProtocols(a, b),
  );
};

/**
 * The preferred protocol. Rucio breaks ties at random; here the listing order (hostname, scheme,
 * port) breaks them, so the same request always gives the same PFN.
 */
export const selectProtocol = (protocols: readonly RseProtocol[], choice: ProtocolChoice): RseProtocol =>
  protocolsFor(protocols, choice)[0]!;
