import { z } from 'zod';
import type { DataImport } from '../../../commands/importExport/importData.ts';
import type { IdentityType } from '../../../domain/identity/identity.ts';
import { DEFAULT_LFN2PFN_ALGORITHM } from '../../../domain/rse/lfn2pfn.ts';
import { protocolKeyFromRequest } from '../../../domain/rse/protocolInput.ts';
import type { RseAttributeValue } from '../../../domain/rse/rse.ts';
import { IdentityError, InvalidObject, type RucioError } from '../../../domain/shared/errors.ts';
import { assertValidName } from '../../../domain/shared/names.ts';
import { isOneOf, isRecord } from '../../../domain/shared/narrowing.ts';
import { requiredValue } from '../../params.ts';
import { checkedBy, convertedBy, missingAs, refusedAs, type Refusal } from '../../routeInput.ts';
import { importedProtocol } from '../rse/rseProtocolParams.ts';
import {
  integerIn,
  newRseProperties,
  propertiesGiven,
  RSE_CREATION_VALUES,
  rseAttributeValue,
  rsePropertyChanges,
} from '../rse/rseRequests.ts';

/**
 * The body of `POST /import` (what `GET /export` gives, plus accounts), checked whole before
 * anything is written: RSEs, then distances, then accounts, each part in the order Rucio's
 * importer reads it. A part of the wrong type is InvalidObject "Problem validating import: <part>
 * <value> is not of type ...", the part named by its place in the body (`rses.<rse>.protocols`)
 * or by what it is (`protocol`, `account`).
 */

const invalidImport = (detail: string): RucioError => new InvalidObject(`Problem validating import: ${detail}`);

/** How a refused part is named in its message: by its place in the body (`rses.<rse>.protocols`), or as given. */
type PartName = (refusal: Refusal) => string;
const byPlace: PartName = ({ issue }) => issue.path.join('.');
const named =
  (name: string): PartName =>
  () =>
    name;

/** `schema`, an object of the import, named by `name` when it is not one. */
const importObject = <T extends z.ZodType>(schema: T, name: PartName = byPlace): T =>
  refusedAs(schema, (refusal) =>
    invalidImport(`${name(refusal)} ${JSON.stringify(refusal.input)} is not of type 'object'`),
  );

/** A list of the import (absent or null: none), named by `name` when it is not one. */
const importList = <T extends z.ZodType>(item: T, name: PartName = byPlace) =>
  refusedAs(z.array(item), (refusal) =>
    invalidImport(`${name(refusal)} ${JSON.stringify(refusal.input)} is not of type 'array'`),
  )
    .nullish()
    .transform((items) => items ?? []);

/** A protocol's scheme, which identifies it on its RSE (the RSE's name is the key two steps up). */
const noScheme = ({ issue }: Refusal): RucioError =>
  invalidImport(`a protocol of ${String(issue.path[1])} has no scheme`);
const SCHEME = missingAs(refusedAs(z.string().min(1), noScheme), noScheme);

/**
 * A protocol of an RSE, typed, with its key. Whether it must be whole (`impl` given) depends on
 * whether the RSE has it already: the decider knows (domain/rse/rseDecider.ts importRse).
 */
const PROTOCOL = importObject(importedProtocol(SCHEME), named('protocol')).transform(({ scheme, request }) => ({
  key: protocolKeyFromRequest(scheme, request),
  request,
}));

const AVAILABILITY_FLAGS = ['availability_read', 'availability_write', 'availability_delete'];

/** Rucio's importer drops the deprecated bitmask beside any of the flags, unread (so unchecked). */
const withoutShadowedAvailability = (entry: unknown): unknown => {
  if (!isRecord(entry) || !('availability' in entry) || !AVAILABILITY_FLAGS.some((flag) => flag in entry)) return entry;
  const { availability: _shadowed, ...rest } = entry;
  return rest;
};

/** Attribute values as `POST /rses/{rse}/attr/{key}` takes them; null: not set. */
const ATTRIBUTES = importObject(
  z.record(
    z.string(),
    convertedBy(z.unknown(), (value) => (value === null ? null : rseAttributeValue(value))).describe(
      'Text, a number or a boolean; null: not set.',
    ),
  ),
  named('attributes'),
).nullish();

/**
 * Attributes, with the export's `lfn2pfn_algorithm` and `verify_checksum` turned into attributes
 * when the attributes do not carry them and they differ from the defaults. Rucio always adds
 * them, so an export imported elsewhere would export differently; this way it exports the same.
 */
const withSettingAttributes = (
  given: Readonly<Record<string, RseAttributeValue | null>>,
  algorithm: unknown,
  verifyChecksum: unknown,
): Record<string, RseAttributeValue> => {
  const attributes: Record<string, RseAttributeValue> = {};
  for (const [key, value] of Object.entries(given)) if (value !== null) attributes[key] = value;
  if (!('lfn2pfn_algorithm' in attributes) && typeof algorithm === 'string' && algorithm !== DEFAULT_LFN2PFN_ALGORITHM)
    attributes.lfn2pfn_algorithm = algorithm;
  if (!('verify_checksum' in attributes) && verifyChecksum !== undefined && verifyChecksum !== null) {
    const verify = rseAttributeValue(verifyChecksum);
    if (verify !== true) attributes.verify_checksum = verify;
  }
  return attributes;
};

/**
 * One RSE, as the export writes it: its protocols, its record (checked as `POST /rses/{rse}`
 * and `PUT /rses/{rse}` check it: a new RSE is created from it, an existing one changed), its
 * attributes and settings, its `MinFreeSpace`.
 */
const RSE_KEYS = z.looseObject({
  protocols: importList(PROTOCOL),
  ...RSE_CREATION_VALUES.shape,
  ...propertiesGiven(['qos_class']),
  attributes: ATTRIBUTES,
  lfn2pfn_algorithm: z
    .unknown()
    .optional()
    .describe('An attribute unless the attributes name it or it is the default.'),
  verify_checksum: z.unknown().optional().describe('An attribute unless the attributes name it or it is true.'),
  MinFreeSpace: integerIn().nullish().describe('The RSE’s MinFreeSpace limit, in bytes.'),
});

const RSE_ENTRY = convertedBy(
  z.preprocess(withoutShadowedAvailability, importObject(RSE_KEYS)),
  ({ protocols, attributes, lfn2pfn_algorithm, verify_checksum, MinFreeSpace, ...record }) => ({
    protocols,
    properties: newRseProperties(record),
    changes: rsePropertyChanges(record),
    attributes: withSettingAttributes(attributes ?? {}, lfn2pfn_algorithm, verify_checksum),
    minFreeSpace: MinFreeSpace ?? null,
  }),
);

const RSES = importObject(
  z.record(
    checkedBy(z.string(), (rse) => assertValidName('rse', rse)),
    RSE_ENTRY,
  ),
).nullish();

/** A distance: `distance`, else (as Rucio's export also writes it) `ranking`; null or absent: none. */
const DISTANCE_VALUE = refusedAs(
  z.number().refine(Number.isSafeInteger).meta({ type: 'integer' }),
  ({ input }) => new InvalidObject(`Problem validating distance: ${JSON.stringify(input)} is not an integer`),
);
const DISTANCE = importObject(
  z.looseObject({
    distance: DISTANCE_VALUE.nullish(),
    ranking: z.unknown().optional().describe('Taken when `distance` is not given.'),
  }),
)
  .transform(({ distance, ranking }) => distance ?? ranking ?? null)
  .pipe(DISTANCE_VALUE.nullable());

const DISTANCES = importObject(z.record(z.string(), importObject(z.record(z.string(), DISTANCE)))).nullish();

/** The identity types an import can create (Rucio's importer knows no others). */
const IMPORTABLE_IDENTITY_TYPES: readonly IdentityType[] = ['USERPASS', 'GSS', 'SSH', 'X509'];

const identityTypeOf = (type: unknown): IdentityType => {
  const upper = String(type).toUpperCase();
  if (!isOneOf(IMPORTABLE_IDENTITY_TYPES, upper))
    throw new IdentityError(
      `${String(type)} is not a valid identity type. Choose from ${IMPORTABLE_IDENTITY_TYPES.join(', ')}`,
    );
  return upper;
};

const IDENTITY = importObject(
  z.object({
    type: convertedBy(requiredValue(), identityTypeOf).describe(IMPORTABLE_IDENTITY_TYPES.join(', ')),
    identity: refusedAs(z.string().min(1), ({ input }) =>
      invalidImport(`identity ${JSON.stringify(input)} is not a non-empty string`),
    ),
    password: refusedAs(z.string(), () => invalidImport("password is not of type 'string'")).nullish(),
  }),
  named('identity'),
).transform(({ type, identity, password }) => ({ identityType: type, identity, password: password ?? null }));

/** Identities are named by their account, the key beside them. */
const identitiesOf: PartName = ({ within }) => `identities of ${String(isRecord(within) ? within.account : undefined)}`;

const ACCOUNT = importObject(
  z.object({
    account: refusedAs(
      checkedBy(z.string(), (account) => assertValidName('account', account)),
      ({ input }) => invalidImport(`account ${JSON.stringify(input)} is not of type 'string'`),
    ),
    email: refusedAs(z.string(), ({ input }) => invalidImport(`email ${JSON.stringify(input)} is not of type 'string'`))
      .nullish()
      .transform((email) => email ?? null),
    identities: importList(IDENTITY, identitiesOf),
  }),
  named('account'),
);

/** The whole body: `rses`, `distances`, `accounts` (each may be absent or null). */
export const DATA_IMPORT = z
  .object({ rses: RSES, distances: DISTANCES, accounts: importList(ACCOUNT) })
  .transform(({ rses, distances, accounts }): DataImport => ({
    rses: Object.entries(rses ?? {}).map(([rse, entry]) => ({ rse, ...entry })),
    distances: Object.entries(distances ?? {}).flatMap(([source, destinations]) =>
      Object.entries(destinations).map(([destination, distance]) => ({ source, destination, distance })),
    ),
    accounts,
  }));
