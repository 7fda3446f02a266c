import { z } from 'zod';
import type { CollectionRule, NewCollection } from '../../../commands/did/didCreationCommands.ts';
import type { CollectionType, DidRef } from '../../../domain/did/did.ts';
import { InvalidObject, UnsupportedOperation } from '../../../domain/shared/errors.ts';
import { isLifetime, LIMITS } from '../../../domain/shared/limits.ts';
import { optionalBoolean, requiredValue } from '../../params.ts';
import { checkedBy, convertedBy, parsed } from '../../routeInput.ts';
import { rseNameIn, withReplicasOn } from '../replica/replicaParams.ts';
import { RULE_REQUEST } from '../rule/ruleParams.ts';
import { attachRequestsIn, didRefShape, fileOwnerIn, listIn, objectIn } from './didParams.ts';

/**
 * A new dataset or container (`add_did`, each item of `add_dids`), read in the order Rucio's
 * schema and core read it: the DID and its type, its rules, its statuses, metadata, lifetime and
 * owner, then `monotonic`, the content to attach, and with `rse` the content's files.
 */

/** Rucio takes the names; the seed documents list the letters, taken too. */
const COLLECTION_TYPES: Readonly<Record<string, CollectionType | 'FILE'>> = {
  DATASET: 'DATASET',
  CONTAINER: 'CONTAINER',
  FILE: 'FILE',
  D: 'DATASET',
  C: 'CONTAINER',
  F: 'FILE',
};

const collectionTypeOf = (type: unknown): CollectionType => {
  const didType = typeof type === 'string' ? COLLECTION_TYPES[type.toUpperCase()] : undefined;
  if (!didType)
    throw new InvalidObject(
      `Problem validating did: ${JSON.stringify(type)} is not one of ['DATASET', 'CONTAINER', 'FILE', 'F']`,
    );
  if (didType === 'FILE') throw new UnsupportedOperation('Only collection (dataset/container) can be registered.');
  return didType;
};

/** A rule given with a new DID: add_rule's options, for that DID (any `dids` it names are ignored), read apart. */
const collectionRuleOf = (rule: unknown, did: DidRef) => {
  const { dids: _dids, ...request } = parsed(RULE_REQUEST, { ...parsed(objectIn('did', {}), rule), dids: [did] });
  return request;
};

/** The DID and its type, looked at first; its rules are read next, with the DID they are for. */
const DID_AND_TYPE = z.looseObject({
  ...didRefShape('did'),
  type: convertedBy(requiredValue(), collectionTypeOf),
  rules: listIn('did', z.unknown()).nullish(),
});

const lifetimeIn = () =>
  checkedBy(z.unknown(), (lifetime) => {
    if (!isLifetime(lifetime))
      throw new InvalidObject(
        `Problem validating did: lifetime ${JSON.stringify(lifetime)} is not a number of seconds (at most ${LIMITS.lifetimeSeconds} either way)`,
      );
  });

/** What a new collection may carry besides its DID, type and rules (also what the document shows). */
export const COLLECTION_KEYS = z.looseObject({
  statuses: objectIn('did', {}).nullish(),
  meta: objectIn('did', {}).nullish(),
  lifetime: lifetimeIn().nullish(),
  account: fileOwnerIn('did'),
});

/** Read after the owner: `monotonic`, the content to attach, and the RSE of its files. */
const CONTENT = z.looseObject({
  statuses: z.looseObject({ monotonic: optionalBoolean(false) }).nullish(),
  dids: attachRequestsIn('dids').nullish(),
  rse: rseNameIn().nullish(),
});

/** A rule of a new collection; without an `account`, the caller (whom only the handler knows) owns it. */
type OwnedLater = Omit<CollectionRule, 'account'> & { account: string | null };

/**
 * One new collection: a stage, then its later keys read apart in Rucio's order (their answers
 * name keys, not paths); with `rse`, the content's files last.
 */
export const NEW_COLLECTION = objectIn('did', {}).pipe(
  withReplicasOn(
    'dids',
    convertedBy(DID_AND_TYPE, (item) => {
      const did = { scope: item.scope, name: item.name };
      const rules = (item.rules ?? []).map((rule): OwnedLater => collectionRuleOf(rule, did));
      const { meta, lifetime, account } = parsed(COLLECTION_KEYS, item);
      const { statuses, dids, rse } = parsed(CONTENT, item);
      return {
        collection: {
          ...did,
          didType: item.type,
          ...(account ? { account } : {}),
          monotonic: statuses?.monotonic ?? false,
          lifetime: typeof lifetime === 'number' ? lifetime : null,
          meta: meta ?? {},
          children: dids ?? [],
        },
        rules,
        account,
        rse,
      };
    }),
  ),
);

/** The collection the handler adds: rules that name no account are the caller's. */
export const collectionFor = (
  { collection, rules, replicas }: z.output<typeof NEW_COLLECTION>,
  issuer: string,
): NewCollection => ({
  ...collection,
  ...(rules.length > 0 ? { rules: rules.map((rule) => ({ ...rule, account: rule.account ?? issuer })) } : {}),
  ...(replicas ? { replicas } : {}),
});
