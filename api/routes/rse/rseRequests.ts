import { z } from 'zod';
import { notA } from '../../params.ts';
import { refusedAs } from '../../routeInput.ts';
import { availabilityFlags } from '../../../domain/rse/availability.ts';
import {
  DEFAULT_RSE_PROPERTIES,
  MUTABLE_RSE_PROPERTIES,
  RSE_TYPES,
  type RseAttributeValue,
  type RseProperties,
} from '../../../domain/rse/rse.ts';
import { InputValidationError, InvalidObject } from '../../../domain/shared/errors.ts';
import { checkText, LIMITS } from '../../../domain/shared/limits.ts';
import { keyProblem } from '../../../domain/shared/names.ts';
import { rucioBooleanOf } from '../../params.ts';
import { isOneOf, keysOf } from '../../../domain/shared/narrowing.ts';

/**
 * RSE request bodies, typed the way Rucio's columns type them. A value of the wrong type is a
 * 400 InvalidObject here (Rucio fails in the database and answers 500).
 */

const NUMBER_PROPERTIES = new Set(['latitude', 'longitude']);
const TEXT_PROPERTIES = new Set([
  'city',
  'region_code',
  'country_name',
  'continent',
  'time_zone',
  'ISP',
  'ASN',
  'qos_class',
]);
const AVAILABILITY_FLAGS = ['availability_read', 'availability_write', 'availability_delete'] as const;

const invalid = (key: string, value: unknown, expected: string) =>
  new InvalidObject(`Problem validating ${key}: ${JSON.stringify(value)} is not ${expected}`);

const booleanProperty =
  (key: string) =>
  (value: unknown): boolean =>
    rucioBooleanOf(value, key);

const numberProperty =
  (key: string) =>
  (value: unknown): number => {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(key, value, 'a number');
    return value;
  };

const textProperty =
  (key: string) =>
  (value: unknown): string => {
    if (typeof value !== 'string') throw invalid(key, value, "of type 'string'");
    return checkText(key, value, LIMITS.rseTextLength);
  };

/** How each property is read from a body (a value of another type is refused). */
const PROPERTY_READERS: { readonly [K in keyof RseProperties]: (value: unknown) => NonNullable<RseProperties[K]> } = {
  rse_type: (value) => {
    if (!isOneOf(RSE_TYPES, value)) throw invalid('rse_type', value, `one of ${RSE_TYPES.join(', ')}`);
    return value;
  },
  deterministic: booleanProperty('deterministic'),
  volatile: booleanProperty('volatile'),
  staging_area: booleanProperty('staging_area'),
  city: textProperty('city'),
  region_code: textProperty('region_code'),
  country_name: textProperty('country_name'),
  continent: textProperty('continent'),
  time_zone: textProperty('time_zone'),
  ISP: textProperty('ISP'),
  ASN: textProperty('ASN'),
  latitude: numberProperty('latitude'),
  longitude: numberProperty('longitude'),
  availability_read: booleanProperty('availability_read'),
  availability_write: booleanProperty('availability_write'),
  availability_delete: booleanProperty('availability_delete'),
  qos_class: textProperty('qos_class'),
};

/** One property value; null means "the default" on creation and "nothing" on update. */
const propertyValue = <K extends keyof RseProperties>(key: K, value: unknown): NonNullable<RseProperties[K]> | null =>
  value === null ? null : PROPERTY_READERS[key](value);

const refuseBothAvailabilityStyles = (body: Readonly<Record<string, unknown>>): void => {
  if ('availability' in body && AVAILABILITY_FLAGS.some((flag) => flag in body)) {
    throw new InputValidationError(
      "'availability' can not be specified with 'availability_read', 'availability_write' or 'availability_delete'",
    );
  }
};

/**
 * `POST /rses/{rse}`: Rucio's defaults for what is not given (deterministic, available for
 * everything, DISK). Keys Rucio does not know are ignored, as Rucio ignores them.
 */
export const rsePropertiesForCreation = (body: Readonly<Record<string, unknown>>): RseProperties => {
  refuseBothAvailabilityStyles(body);
  const properties: RseProperties = { ...DEFAULT_RSE_PROPERTIES };
  if (body.availability !== undefined && body.availability !== null)
    Object.assign(properties, availabilityFlags(body.availability));
  const given = <K extends keyof RseProperties>(key: K): void => {
    if (key === 'qos_class' || !(key in body)) return;
    const value = propertyValue(key, body[key]);
    if (value !== null) properties[key] = value;
  };
  for (const key of keysOf(DEFAULT_RSE_PROPERTIES)) given(key);
  return properties;
};

/**
 * `PUT /rses/{rse}`: only Rucio's mutable properties (InputValidationError otherwise). The legacy
 * `availability` bitmask sets the three flags; explicit flags given beside it win, as in Rucio.
 * `qos_class` of '', 'none' or 'null' clears it.
 */
export const rsePropertyChanges = (rse: string, body: Readonly<Record<string, unknown>>): Partial<RseProperties> => {
  const changes: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    if (key === 'name') {
      if (body.name !== rse) throw new InputValidationError(`Renaming RSE '${rse}' is not supported.`);
      continue;
    }
    if (key !== 'availability' && !(MUTABLE_RSE_PROPERTIES as readonly string[]).includes(key)) {
      throw new InputValidationError(`The key '${key}' does not exist for RSE properties.`);
    }
  }
  if (body.availability !== undefined && body.availability !== null)
    Object.assign(changes, availabilityFlags(body.availability));
  for (const key of MUTABLE_RSE_PROPERTIES) {
    if (!(key in body)) continue;
    const value = propertyValue(key, body[key]);
    if (key === 'qos_class') {
      changes.qos_class =
        typeof value === 'string' && !['', 'none', 'null'].includes(value.toLowerCase()) ? value : null;
    } else if (value !== null || TEXT_PROPERTIES.has(key) || NUMBER_PROPERTIES.has(key)) {
      changes[key] = value;
    }
  }
  return changes;
};

/**
 * An RSE attribute value: text or a boolean, with `true` / `false` text read as booleans (as
 * Rucio's BooleanString column does) and numbers kept as their text.
 */
export const rseAttributeValue = (value: unknown): RseAttributeValue => {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') throw invalid('value', value, 'a string, a number or a boolean');
  checkText('value', value, LIMITS.rseAttributeValueLength);
  const lower = value.toLowerCase();
  return lower === 'true' ? true : lower === 'false' ? false : value;
};

/** An attribute key: Rucio's column width, printable, never a prototype property's name. */
export const rseAttributeKey = (key: string): string => {
  const problem = keyProblem(key, LIMITS.rseAttributeKeyLength);
  if (problem) throw new InvalidObject(`Problem validating key: ${JSON.stringify(key.slice(0, 100))} ${problem}`);
  return key;
};

/** A whole number where Rucio has an integer column: InvalidObject "... is not an integer" otherwise. */
export const integerIn = () => refusedAs(z.number().refine(Number.isSafeInteger), notA('an integer'));

/** A whole number where Rucio has an integer column; `nullable` lets null through. */
export const integerParameter = (key: string, value: unknown, options: { nullable: boolean }): number | null => {
  if (value === null || value === undefined) {
    if (options.nullable) return null;
    throw invalid(key, value, 'an integer');
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw invalid(key, value, 'an integer');
  return value;
};
