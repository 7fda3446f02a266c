import type { CommandContext } from '../../commands/commandContext.ts';
import { ensureRootAccount } from '../../commands/bootstrap.ts';
import { addCollections } from '../../commands/did/didCreation.ts';
import { attachDids } from '../../commands/did/didContent.ts';
import { addReplicas } from '../../commands/replica/replicaRegistration.ts';
import { createRse, setRseAttribute } from '../../commands/rse/rseCommands.ts';
import { addScope } from '../../commands/scope/scopeCommands.ts';
import { DEFAULT_RSE_PROPERTIES, type RseProperties } from '../../domain/rse/rse.ts';
import type { RuleRequest } from '../../domain/rule/ruleCreation.ts';
import { as } from './commandSpec.ts';

/** Builders for rule tests through the command layer: the world a rule meets, and rule requests. */

export const SCOPE = 'user.root';

/** Root, a scope, and RSEs (DISK unless told), each with the attributes given. */
export const aWorld = async (
  context: CommandContext,
  rses: Readonly<Record<string, Readonly<{ properties?: Partial<RseProperties>; attributes?: Readonly<Record<string, string | boolean>> }>>>,
): Promise<void> => {
  await ensureRootAccount(context, { username: 'root-login', password: 'pw', email: 'root@localhost' });
  await addScope(context, { scope: SCOPE, account: 'root' }, as('root'));
  for (const [rse, { properties, attributes }] of Object.entries(rses)) {
    await createRse(context, { rse, properties: { ...DEFAULT_RSE_PROPERTIES, ...properties } }, as('root'));
    for (const [key, value] of Object.entries(attributes ?? {})) await setRseAttribute(context, { rse, key, value }, as('root'));
  }
};

/** A dataset of files, each 100 bytes, with a replica on `rse`. */
export const aDataset = async (context: CommandContext, name: string, files: readonly string[], rse: string): Promise<void> => {
  await addCollections(
    context,
    { dids: [{ scope: SCOPE, name, didType: 'DATASET', monotonic: false, lifetime: null, meta: {}, children: [] }], single: true },
    as('root'),
  );
  if (files.length === 0) return;
  const described = files.map((file) => ({ scope: SCOPE, name: file, bytes: 100, adler32: '0cc737eb' }));
  await addReplicas(context, { rse, files: described, ignoreAvailability: true }, as('root'));
  const children = described.map(({ scope, name: file }) => ({ scope, name: file }));
  await attachDids(context, { attachments: [{ scope: SCOPE, name, children }], ignoreDuplicates: false, single: true }, as('root'));
};

/** A rule request with Rucio's defaults, owned by root, for one DID of SCOPE. */
export const aRuleRequest = (name: string, rseExpression: string, extra: Partial<RuleRequest> = {}): RuleRequest => ({
  dids: [{ scope: SCOPE, name }],
  account: 'root',
  copies: 1,
  rseExpression,
  weight: null,
  lifetime: null,
  grouping: 'DATASET',
  locked: false,
  subscriptionId: null,
  sourceReplicaExpression: null,
  activity: 'User Subscriptions',
  notification: 'NO',
  purgeReplicas: false,
  ignoreAvailability: false,
  ignoreAccountLimit: false,
  comment: null,
  askApproval: false,
  asynchronous: false,
  delayInjection: null,
  priority: 3,
  splitContainer: false,
  meta: null,
  ...extra,
});
