import { z } from 'zod';
import { InvalidObject } from '../../../domain/shared/errors.ts';
import { isRecord } from '../../../domain/shared/narrowing.ts';
import { optionalBoolean, queryText, readWhenAsked } from '../../params.ts';
import { checkLifetime } from '../credential/signing.ts';
import { checkedBy, convertedBy, refusedAs } from '../../routeInput.ts';
import { integerParameter, parseUtc, readDidsIn } from './replicaParams.ts';

/**
 * The body of `POST /replicas/list`, read in the order Rucio's view reads it. A preprocess step
 * states what depends on other keys: `unavailable` is read only while `all_states` is false, and
 * `ignore_availability` defaults to whether `unavailable` was given at all.
 */

const notSchemes = (schemes: unknown) =>
  new InvalidObject(`Problem validating schemes: ${JSON.stringify(schemes)} is not a list of schemes`);

/** Where the client says it is (`client_location`): an object, else nothing. */
const clientLocationOf = (location: unknown): Readonly<Record<string, unknown>> => (isRecord(location) ? location : {});

const textOrNone = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);

const LISTING_KEYS = z.looseObject({
  domain: refusedAs(
    z.enum(['wan', 'lan', 'all']),
    ({ input }) =>
      new InvalidObject(`Problem validating domain: ${JSON.stringify(input)} is not one of ['wan', 'lan', 'all']`),
  ).nullish(),
  schemes: refusedAs(
    checkedBy(z.array(z.unknown()), (schemes) => {
      if (schemes.some((scheme) => typeof scheme !== 'string')) throw notSchemes(schemes);
    }),
    ({ input }) => notSchemes(input),
  )
    .transform((schemes) => schemes.map(String))
    .nullish(),
  // Where the client says it is: an object, else nothing.
  client_location: z.unknown().optional().transform(clientLocationOf),
  // Rucio reads a falsy `nrandom` as none.
  nrandom: z.preprocess(
    (nrandom) => nrandom || undefined,
    convertedBy(z.unknown(), (nrandom) => integerParameter(nrandom, 'nrandom')).optional(),
  ),
  dids: readDidsIn().nullish(),
  all_states: optionalBoolean(false),
  unavailable: optionalBoolean(false),
  ignore_availability: optionalBoolean(false),
  // Anything but non-empty text is no expression.
  rse_expression: z.unknown().optional().transform(textOrNone),
  updated_after: convertedBy(z.unknown(), (after) =>
    typeof after === 'number'
      ? new Date(after * 1000).toISOString()
      : parseUtc(after, 'seconds', 'updated_after').toISOString(),
  ).nullish(),
  resolve_parents: optionalBoolean(false),
  resolve_archives: optionalBoolean(true),
  sort: z.unknown().optional().transform(textOrNone),
  signature_lifetime: readWhenAsked(
    convertedBy(z.unknown(), (lifetime) =>
      checkLifetime(integerParameter(lifetime, 'signature_lifetime'), 'signature_lifetime'),
    ).nullish(),
  ).describe('Seconds the signed PFNs stay valid, 1 to 604800 (read for callers who may sign; null: the configured).'),
});

const allStates = (body: Readonly<Record<string, unknown>>): boolean => {
  const read = optionalBoolean(false).safeParse(body.all_states);
  return read.success && read.data;
};

export const REPLICA_LISTING = z.looseObject({}).pipe(
  z.preprocess((body: Readonly<Record<string, unknown>>) => {
    const { unavailable, ...rest } = body;
    const ignoreAvailability = body.ignore_availability ?? 'unavailable' in body;
    return {
      ...rest,
      ...(allStates(body) || !('unavailable' in body) ? {} : { unavailable }),
      ignore_availability: ignoreAvailability,
    };
  }, LISTING_KEYS),
);

/** What the document shows: every key the listing reads. */
export const REPLICA_LISTING_KEYS = LISTING_KEYS;

/**
 * `limit` of a listing's query: at most this many PFNs per file, a whole number as Python's int()
 * reads text (ValueError otherwise); absent, or empty where `emptyIsNone`, is none.
 */
export const pfnLimitQuery = ({ emptyIsNone }: { emptyIsNone: boolean }) =>
  convertedBy(queryText(), (text) =>
    text === undefined || (emptyIsNone && text === '') ? undefined : integerParameter(text, 'limit'),
  );
