import { z } from 'zod';
import { notA, rucioBoolean } from '../../params.ts';
import { checkedBy, convertedBy, refusedAs } from '../../routeInput.ts';
import { availabilityFlags } from '../../../domain/rse/availability.ts';
import {
  DEFAULT_RSE_PROPERTIES,
  MUTABLE_RSE_PROPERTIES,
  RSE_NUMBER_PROPERTIES,
  RSE_TEXT_PROPERTIES,
  RSE_TYPES,
  type RseAttributeValue,
  type RseProperties,
} from '../../../domain/rse/rse.ts';
import { InputValidationError, InvalidObject } from '../../../domain/shared/errors.ts';
import { checkText, LIMITS } from '../../../domain/shared/limits.ts';
import { keyProblem } from '../../../domain/shared/names.ts';
import { keysOf } from '../../../domain/shared/narrowing.ts';

/**
 * RSE request bodies, typed the way Rucio's columns type them. A value of the wrong type is a
 * 400 InvalidObject here (Rucio fails in the database and answers 500).
 */

/** Null clears these in a change (text and numbers); null leaves the rest as they are. */
const CLEARED_BY_NULL = new Set<string>([...RSE_TEXT_PROPERTIES, ...RSE_NUMBER_PROPERTIES]);
const AVAILABILITY_FLAGS = ['availability_read', 'availability_write', 'availability_delete'] as const;

const invalid = (key: string, value: unknown, expected: string) =>
  new InvalidObject(`Problem validating ${key}: ${JSON.stringify(value)} is not ${expected}`);

const textProperty = (key: string) =>
  refusedAs(
    checkedBy(z.string(), (value) => checkText(key, value, LIMITS.rseTextLength)),
    notA("of type 'string'"),
  );

/** How each property is checked in a body (a value of another type is refused); null is "not given". */
const PROPERTIES = {
  rse_type: refusedAs(z.enum(RSE_TYPES), notA(`one of ${RSE_TYPES.join(', ')}`)),
  deterministic: rucioBoolean(),
  volatile: rucioBoolean(),
  staging_area: rucioBoolean(),
  city: textProperty('city'),
  region_code: textProperty('region_code'),
  country_name: textProperty('country_name'),
  continent: textProperty('continent'),
  time_zone: textProperty('time_zone'),
  ISP: textProperty('ISP'),
  ASN: textProperty('ASN'),
  latitude: refusedAs(z.number(), notA('a number')),
  longitude: refusedAs(z.number(), notA('a number')),
  availability_read: rucioBoolean(),
  availability_write: rucioBoolean(),
  availability_delete: rucioBoolean(),
  qos_class: textProperty('qos_class'),
} satisfies { readonly [K in keyof RseProperties]: z.ZodType<NonNullable<RseProperties[K]>, unknown> };

/** The properties `keys`, each optional or null (each checked as `PROPERTIES` says). */
export const propertiesGiven = (keys: readonly (keyof RseProperties)[]) =>
  Object.fromEntries(keys.map((key) => [key, PROPERTIES[key].optional().nullable()]));

/** The legacy bitmask (0 to 7) of the three availability flags. */
const availability = () =>
  convertedBy(z.unknown().optional(), (value) =>
    value === undefined || value === null ? {} : availabilityFlags(value),
  );

/** Rucio refuses the bitmask beside any of the flags before it reads a value. */
const oneAvailabilityStyle = () =>
  checkedBy(z.looseObject({}), (body) => {
    if ('availability' in body && AVAILABILITY_FLAGS.some((flag) => flag in body)) {
      throw new InputValidationError(
        "'availability' can not be specified with 'availability_read', 'availability_write' or 'availability_delete'",
      );
    }
  });

/**
 * `POST /rses/{rse}`: Rucio's defaults for what is not given (deterministic, available for
 * everything, DISK). Keys Rucio does not know are ignored, as Rucio ignores them, `qos_class`
 * among them.
 */
export const RSE_CREATION_VALUES = z.looseObject({
  availability: availability(),
  ...propertiesGiven(keysOf(DEFAULT_RSE_PROPERTIES).filter((key) => key !== 'qos_class')),
});

/** A new RSE's properties: Rucio's defaults, then the flags of the bitmask, then what is given. */
export const newRseProperties = ({ availability, ...given }: z.output<typeof RSE_CREATION_VALUES>): RseProperties => {
  const properties: RseProperties = { ...DEFAULT_RSE_PROPERTIES, ...availability };
  for (const key of keysOf(DEFAULT_RSE_PROPERTIES)) {
    const value = key === 'qos_class' ? undefined : given[key];
    if (value !== undefined && value !== null) Object.assign(properties, { [key]: value });
  }
  return properties;
};
export const RSE_CREATION = oneAvailabilityStyle().pipe(RSE_CREATION_VALUES).transform(newRseProperties);

/** The changes the mutable properties given make: the bitmask's flags, then each given property. */
export const rsePropertyChanges = ({
  availability,
  ...given
}: z.output<typeof RSE_CHANGE_VALUES>): Partial<RseProperties> => {
  const changes: Partial<RseProperties> = { ...availability };
  for (const key of MUTABLE_RSE_PROPERTIES) {
    if (!(key in given)) continue;
    const value = given[key];
    if (key === 'qos_class') {
      changes.qos_class =
        typeof value === 'string' && !['', 'none', 'null'].includes(value.toLowerCase()) ? value : null;
    } else if (value !== null || CLEARED_BY_NULL.has(key)) {
      Object.assign(changes, { [key]: value });
    }
  }
  return changes;
};

/** Keys `PUT /rses/{rse}` takes: the mutable properties, the bitmask, and the name (which cannot change). */
const CHANGEABLE_KEYS = ['name', 'availability', ...MUTABLE_RSE_PROPERTIES] as const;

/**
 * `PUT /rses/{rse}`: only Rucio's mutable properties, and `name` (InputValidationError for any
 * other key, the first in the body's order, before any value is read). The legacy `availability`
 * bitmask sets the three flags; explicit flags given beside it win, as in Rucio. `qos_class` of
 * '', 'none' or 'null' clears it; null clears text and numbers and leaves the rest.
 */
export const RSE_CHANGE_VALUES = z.looseObject({
  availability: availability(),
  ...propertiesGiven(MUTABLE_RSE_PROPERTIES),
});
export const RSE_CHANGES = z
  .object(Object.fromEntries(CHANGEABLE_KEYS.map((key) => [key, z.unknown().optional()])))
  .catchall(
    refusedAs(
      z.custom(() => false),
      ({ key }) => new InputValidationError(`The key '${String(key)}' does not exist for RSE properties.`),
    ),
  )
  .pipe(RSE_CHANGE_VALUES)
  .transform((values) => ({ name: values.name, changes: rsePropertyChanges(values) }));

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
