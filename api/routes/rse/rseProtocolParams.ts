import { z } from 'zod';
import {
  PROTOCOL_DOMAINS,
  PROTOCOL_OPERATIONS,
  type PrioritySetting,
  type ProtocolDomain,
  type ProtocolOperation,
} from '../../../domain/rse/protocol.ts';
import type { ProtocolRequest } from '../../../domain/rse/protocolInput.ts';
import {
  InvalidObject,
  RSEOperationNotSupported,
  RSEProtocolDomainNotSupported,
  RSEProtocolPriorityError,
  type RucioError,
} from '../../../domain/shared/errors.ts';
import { isOneOf, keysOf } from '../../../domain/shared/narrowing.ts';
import { pythonStr } from '../../../domain/shared/pythonLiteral.ts';
import { jsonDictionary } from '../../params.ts';
import { checkedBy, convertedBy, refusedAs, type Refusal } from '../../routeInput.ts';

/**
 * Protocol request bodies (`POST` and `PUT /rses/{rse}/protocols/{scheme}...`, and each protocol
 * of an import), typed as Rucio's add_protocol / update_protocols check them. What depends on the
 * scheme or on the RSE (srm's web service path, impl for a whole new protocol, the prefix of
 * local files) is the domain's (domain/rse/protocolInput.ts), over the typed request.
 */

const protocolDomainOf = (text: string): ProtocolDomain => {
  if (!isOneOf(PROTOCOL_DOMAINS, text))
    throw new RSEProtocolDomainNotSupported(`The protocol domain '${text}' is not defined in the schema.`);
  return text;
};

const protocolOperationOf = (text: string): ProtocolOperation => {
  if (!isOneOf(PROTOCOL_OPERATIONS, text))
    throw new RSEOperationNotSupported(`Operation '${text}' not defined in schema.`);
  return text;
};

const notAnObject = ({ input }: Refusal): RucioError =>
  new InvalidObject(`Problem validating domains: ${JSON.stringify(input)} is not of type 'object'`);

/** The operation is the refused value's key, its domain the key above it. */
const unsupportedPriority = ({ issue, input, key }: Refusal): RucioError =>
  new RSEProtocolPriorityError(
    `The provided priority (${pythonStr(input)}) for operation '${String(key)}' in domain '${String(issue.path.at(-2))}' is not supported.`,
  );

const PRIORITY = refusedAs(
  z
    .number()
    .refine((priority) => Number.isInteger(priority) && priority >= 0)
    .meta({ type: 'integer', minimum: 0 }),
  unsupportedPriority,
).nullable();

/**
 * `domains`: `{lan|wan: {operation: priority}}`. Each domain, then its operations, is checked in
 * the body's order, as Rucio reads them; the settings keep that order.
 */
const DOMAINS = refusedAs(
  z.record(
    convertedBy(z.string().meta({ enum: [...PROTOCOL_DOMAINS] }), protocolDomainOf),
    refusedAs(
      z.record(convertedBy(z.string().meta({ enum: [...PROTOCOL_OPERATIONS] }), protocolOperationOf), PRIORITY),
      notAnObject,
    ),
  ),
  notAnObject,
).transform((domains): PrioritySetting[] =>
  keysOf(domains).flatMap((domain) =>
    keysOf(domains[domain]).map((operation) => ({ domain, operation, priority: domains[domain][operation] })),
  ),
);

const notText = ({ key, input }: Refusal): RucioError =>
  new InvalidObject(`Problem validating protocol: ${String(key)} ${JSON.stringify(input)} is not of type 'string'`);

const protocolText = (description: string) => refusedAs(z.string(), notText).nullish().describe(description);

const PORT = refusedAs(
  z
    .number()
    .refine((port) => Number.isInteger(port) && port >= 0)
    .meta({ type: 'integer', minimum: 0 }),
  ({ input }) =>
    new InvalidObject(`Problem validating protocol: port ${JSON.stringify(input)} is not a non-negative integer`),
);

const FIELDS = {
  domains: DOMAINS.optional().describe(
    'Priorities by domain (lan, wan) and operation (read, write, delete, third_party_copy_read, third_party_copy_write): an integer ≥ 0, lower preferred, or null.',
  ),
  impl: protocolText('The implementation, e.g. rucio.rse.protocols.webdav.Default.'),
  prefix: protocolText('The path every PFN starts with.'),
  hostname: protocolText('Default localhost.'),
  port: PORT.nullish().describe('Default 0.'),
  extended_attributes: z.unknown().optional().describe('Free JSON; srm needs `web_service_path`.'),
};

type Fields = Readonly<{ domains?: readonly PrioritySetting[] | undefined }> & Omit<ProtocolRequest, 'priorities'>;

const protocolRequestOf = ({ domains, ...fields }: Fields): ProtocolRequest => ({
  ...fields,
  priorities: domains ?? [],
});

/** The keys of a whole protocol, in the order Rucio's add_protocol reads them. */
const NEW_PROTOCOL_FIELDS = {
  domains: FIELDS.domains,
  impl: FIELDS.impl,
  prefix: FIELDS.prefix,
  hostname: FIELDS.hostname,
  port: FIELDS.port,
  extended_attributes: FIELDS.extended_attributes,
};

/** `POST /rses/{rse}/protocols/{scheme}`: a protocol (impl required, the domain says: it needs the scheme). */
export const NEW_PROTOCOL = z.object(NEW_PROTOCOL_FIELDS).transform(protocolRequestOf);

/** An import's protocol: its scheme (checked by the import), then what `NEW_PROTOCOL` reads. */
export const importedProtocol = (scheme: z.ZodType<string>) =>
  z.object({ scheme, ...NEW_PROTOCOL_FIELDS }).transform(({ scheme, ...fields }) => ({
    scheme,
    request: protocolRequestOf(fields),
  }));

/** What a protocol change may name, in the order Rucio's update_protocols reads them. */
export const PROTOCOL_CHANGE_FIELDS = z.object({
  domains: FIELDS.domains,
  prefix: FIELDS.prefix,
  impl: FIELDS.impl,
  extended_attributes: FIELDS.extended_attributes,
});

const IDENTIFYING_KEYS = ['scheme', 'hostname', 'port'] as const;

/** Scheme, hostname and port identify the protocol: refused, all named, before any value is read. */
const identifyingKeysRefused = (body: Readonly<Record<string, unknown>>): void => {
  const identifying = IDENTIFYING_KEYS.filter((key) => Object.hasOwn(body, key));
  if (identifying.length > 0)
    throw new InvalidObject(
      `Problem validating protocol: ${identifying.join(', ')} identify a protocol and cannot be changed`,
    );
};

/** `PUT /rses/{rse}/protocols/{scheme}...`: the changes (no identifying key). */
export const PROTOCOL_CHANGES = checkedBy(jsonDictionary({}), identifyingKeysRefused).pipe(
  PROTOCOL_CHANGE_FIELDS.transform(protocolRequestOf),
);
