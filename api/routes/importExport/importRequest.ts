import type { AccountImport, DataImport, RseImport } from '../../../commands/importExport/importData.ts';
import type { IdentityType } from '../../../domain/identity/identity.ts';
import { DEFAULT_LFN2PFN_ALGORITHM } from '../../../domain/rse/lfn2pfn.ts';
import { isPlainObject, prioritySettings } from '../../../domain/rse/protocol.ts';
import { protocolKeyFromRequest } from '../../../domain/rse/protocolInput.ts';
import { DEFAULT_RSE_PROPERTIES, MUTABLE_RSE_PROPERTIES, type RseAttributeValue } from '../../../domain/rse/rse.ts';
import { IdentityError, InvalidObject } from '../../../domain/shared/errors.ts';
import { assertValidName } from '../../../domain/shared/names.ts';
import { requiredKey } from '../../params.ts';
import { integerParameter, RSE_CHANGES, RSE_CREATION, rseAttributeValue } from '../rse/rseRequests.ts';
import { parsed } from '../../routeInput.ts';
import { isOneOf } from '../../../domain/shared/narrowing.ts';

/**
 * The body of `POST /import` (what `GET /export` gives, plus accounts), read and checked whole
 * before anything is written.
 */

const invalidImport = (detail: string) => new InvalidObject(`Problem validating import: ${detail}`);

const objectOf = (value: unknown, what: string): Record<string, unknown> => {
  if (!isPlainObject(value)) throw invalidImport(`${what} ${JSON.stringify(value)} is not of type 'object'`);
  return value;
};

const listOf = (value: unknown, what: string): unknown[] => {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidImport(`${what} ${JSON.stringify(value)} is not of type 'array'`);
  return value;
};

const AVAILABILITY_FLAGS = ['availability_read', 'availability_write', 'availability_delete'];

/** The record fields an import names; the deprecated bitmask only counts when no flag is given. */
const recordFields = (entry: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> => {
  const fields = Object.fromEntries(Object.entries(entry).filter(([key]) => keys.includes(key)));
  if ('availability' in entry && !AVAILABILITY_FLAGS.some((flag) => flag in entry))
    fields.availability = entry.availability;
  return fields;
};

/**
 * Attributes, with the export's `lfn2pfn_algorithm` and `verify_checksum` turned into attributes
 * when the attributes do not carry them and they differ from the defaults. Rucio always adds
 * them, so an export imported elsewhere would export differently; this way it exports the same.
 */
const attributesOf = (entry: Record<string, unknown>): Record<string, RseAttributeValue> => {
  const attributes: Record<string, RseAttributeValue> = {};
  for (const [key, value] of Object.entries(
    entry.attributes === undefined || entry.attributes === null ? {} : objectOf(entry.attributes, 'attributes'),
  )) {
    if (value !== null) attributes[key] = rseAttributeValue(value);
  }
  const algorithm = entry.lfn2pfn_algorithm;
  if (
    !('lfn2pfn_algorithm' in attributes) &&
    typeof algorithm === 'string' &&
    algorithm !== DEFAULT_LFN2PFN_ALGORITHM
  ) {
    attributes.lfn2pfn_algorithm = algorithm;
  }
  const verifyChecksum = entry.verify_checksum;
  if (
    !('verify_checksum' in attributes) &&
    verifyChecksum !== undefined &&
    verifyChecksum !== null &&
    rseAttributeValue(verifyChecksum) !== true
  ) {
    attributes.verify_checksum = rseAttributeValue(verifyChecksum);
  }
  return attributes;
};

const rseImportOf = (rse: string, value: unknown): RseImport => {
  assertValidName('rse', rse);
  const entry = objectOf(value, `rses.${rse}`);
  const protocols = listOf(entry.protocols, `rses.${rse}.protocols`).map((value) => {
    const request = objectOf(value, 'protocol');
    if (typeof request.scheme !== 'string' || request.scheme === '')
      throw invalidImport(`a protocol of ${rse} has no scheme`);
    // Whether the whole protocol (impl included) is needed depends on the RSE; the rest is checked now.
    prioritySettings(request.domains);
    return { key: protocolKeyFromRequest(request.scheme, request), request };
  });
  return {
    rse,
    properties: parsed(RSE_CREATION, recordFields(entry, Object.keys(DEFAULT_RSE_PROPERTIES))),
    changes: parsed(RSE_CHANGES, recordFields(entry, MUTABLE_RSE_PROPERTIES)).changes,
    attributes: attributesOf(entry),
    protocols,
    minFreeSpace: integerParameter('MinFreeSpace', entry.MinFreeSpace, { nullable: true }),
  };
};

const distancesOf = (value: unknown): DataImport['distances'] => {
  if (value === undefined || value === null) return [];
  return Object.entries(objectOf(value, 'distances')).flatMap(([source, destinations]) =>
    Object.entries(objectOf(destinations, `distances.${source}`)).map(([destination, entry]) => {
      const fields = objectOf(entry, `distances.${source}.${destination}`);
      const given = fields.distance ?? fields.ranking ?? null;
      return { source, destination, distance: integerParameter('distance', given, { nullable: true }) };
    }),
  );
};

/** The identity types an import can create (Rucio's importer knows no others). */
const IMPORTABLE_IDENTITY_TYPES: readonly IdentityType[] = ['USERPASS', 'GSS', 'SSH', 'X509'];

const accountImportOf = (value: unknown): AccountImport => {
  const entry = objectOf(value, 'account');
  const account = requiredKey(entry, 'account');
  if (typeof account !== 'string') throw invalidImport(`account ${JSON.stringify(account)} is not of type 'string'`);
  assertValidName('account', account);
  const email = entry.email ?? null;
  if (email !== null && typeof email !== 'string')
    throw invalidImport(`email ${JSON.stringify(email)} is not of type 'string'`);
  const identities = listOf(entry.identities, `identities of ${account}`).map((item) => {
    const identity = objectOf(item, 'identity');
    const type = String(requiredKey(identity, 'type')).toUpperCase();
    if (!isOneOf(IMPORTABLE_IDENTITY_TYPES, type)) {
      throw new IdentityError(
        `${String(identity.type)} is not a valid identity type. Choose from ${IMPORTABLE_IDENTITY_TYPES.join(', ')}`,
      );
    }
    const key = requiredKey(identity, 'identity');
    if (typeof key !== 'string' || key === '')
      throw invalidImport(`identity ${JSON.stringify(key)} is not a non-empty string`);
    const password = identity.password ?? null;
    if (password !== null && typeof password !== 'string') throw invalidImport("password is not of type 'string'");
    return { identityType: type, identity: key, password };
  });
  return { account, email, identities };
};

export const dataImportFromBody = (body: Readonly<Record<string, unknown>>): DataImport => ({
  rses: Object.entries(body.rses === undefined || body.rses === null ? {} : objectOf(body.rses, 'rses')).map(
    ([rse, value]) => rseImportOf(rse, value),
  ),
  distances: distancesOf(body.distances),
  accounts: listOf(body.accounts, 'accounts').map(accountImportOf),
});
