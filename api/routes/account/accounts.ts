import {
  addAccountAttribute,
  createAccount,
  deleteAccount,
  removeAccountAttribute,
  updateAccount,
} from '../../../commands/account/accountCommands.ts';
import { grantIdentity, revokeIdentity } from '../../../commands/identity/identityCommands.ts';
import { addScope } from '../../../commands/scope/scopeCommands.ts';
import { ACCOUNT_TYPES, type AccountType } from '../../../domain/account/account.ts';
import { IDENTITY_TYPES, type IdentityType } from '../../../domain/identity/identity.ts';
import { isoSecondsOrNull } from '../../../domain/shared/dates.ts';
import {
  AccountNotFound,
  IdentityError,
  InvalidAccountType,
  InvalidObject,
  ScopeNotFound,
} from '../../../domain/shared/errors.ts';
import { checkText, LIMITS } from '../../../domain/shared/limits.ts';
import { assertValidName, isValidName, PROTOTYPE_KEYS } from '../../../domain/shared/names.ts';
import { findAccount, listAccounts, type AccountListing } from '../../../projections/account/accountQueries.ts';
import type { AccountDocument } from '../../../projections/account/accountsProjection.ts';
import { identitiesOfAccount } from '../../../projections/identity/identityQueries.ts';
import { scopeNamesOfAccount } from '../../../projections/scope/scopeQueries.ts';
import { JSON_ONLY, mapStream, sendJson, sendStream, STREAM_ONLY } from '../../http.ts';
import {
  jsonObjectBody,
  optionalBoolean,
  pathOf,
  pathText,
  queryFilter,
  queryFilters,
  queryOf,
  queryText,
  validName,
} from '../../params.ts';
import { checkedBy, convertedBy, refusedAs } from '../../routeInput.ts';
import { z } from 'zod';
import { created, ok, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';
import { wildcardPattern } from '../../wildcardPattern.ts';
import { listRules, ruleFilter } from '../../../projections/rule/ruleQueries.ts';
import { ruleLines } from '../rule/rules.ts';
import { isOneOf } from '../../../domain/shared/narrowing.ts';

/** Account details as Rucio's `Account.to_dict()`, with its `YYYY-MM-DDTHH:MM:SS` dates. */
const accountDetails = (document: AccountDocument) => ({
  account: document.account,
  account_type: document.accountType,
  status: document.status,
  email: document.email,
  suspended_at: isoSecondsOrNull(document.suspendedAt),
  deleted_at: isoSecondsOrNull(document.deletedAt),
  created_at: isoSecondsOrNull(document.createdAt),
  updated_at: isoSecondsOrNull(document.updatedAt),
});

/** An account attribute value is text; booleans and numbers are accepted and kept as text. */
const attributeValue = z.preprocess(
  (value) =>
    typeof value === 'boolean' ? (value ? 'True' : 'False') : typeof value === 'number' ? String(value) : value,
  checkedBy(
    refusedAs(
      z.string(),
      ({ input }) =>
        new InvalidObject(`Problem validating account_attribute: ${JSON.stringify(input)} is not of type 'string'`),
    ),
    (text) => assertValidName('account_attribute', text),
  ),
);

const notAnIdentityType = (value: unknown) =>
  new IdentityError(`${String(value)} is not a valid identity type. Choose from ${IDENTITY_TYPES.join(', ')}`);

/** An identity type, any case: IdentityError naming the types otherwise. */
const identityType = convertedBy(
  // The enum the document lists (and the console offers); the check itself takes any case.
  refusedAs(z.string().meta({ enum: [...IDENTITY_TYPES], description: 'In any case.' }), ({ input }) =>
    notAnIdentityType(input),
  ),
  (text): IdentityType => {
    const upper = text.toUpperCase();
    if (!isOneOf(IDENTITY_TYPES, upper)) throw notAnIdentityType(text);
    return upper;
  },
);

/** A required text: InvalidObject when it is not a non-empty string, or breaks `checkText`. */
const requiredText = (name: string, maxLength: number) =>
  checkedBy(
    refusedAs(
      z.string().min(1),
      ({ input }) =>
        new InvalidObject(`Problem validating ${name}: ${JSON.stringify(input)} is not a non-empty string`),
    ),
    (value) => checkText(name, value, maxLength),
  );

/** Text or null; InvalidObject for another type, or text that breaks `checkText`. */
const optionalText = (name: string, maxLength: number, options: { multiline?: boolean } = {}) =>
  checkedBy(
    refusedAs(
      z.string(),
      ({ input }) => new InvalidObject(`Problem validating ${name}: ${JSON.stringify(input)} is not of type 'string'`),
    ).nullable(),
    (value) => (value === null ? null : checkText(name, value, maxLength, options)),
  );

/** An attribute key: Rucio's pattern, and never a prototype property's name (`constructor` fits the pattern). */
const attributeKey = checkedBy(validName('account_attribute'), (key) => {
  if (PROTOTYPE_KEYS.has(key)) throw new InvalidObject(`Problem validating account_attribute: '${key}' is reserved`);
});

const accountPath = pathOf({ account: pathText() });
const attributePath = pathOf({ account: pathText(), key: attributeKey });

const notAnAccountType = (value: unknown) =>
  new InvalidAccountType(`${String(value)} is an invalid account type. Choose from ${JSON.stringify(ACCOUNT_TYPES)}`);

/** An account type, any case: InvalidAccountType naming the types otherwise. */
const accountType = convertedBy(
  // The enum the document lists (and the console offers); the check itself takes any case.
  refusedAs(z.string().meta({ enum: [...ACCOUNT_TYPES], description: 'In any case.' }), ({ input }) =>
    notAnAccountType(input),
  ),
  (text): AccountType => {
    const upper = text.toUpperCase();
    if (!isOneOf(ACCOUNT_TYPES, upper)) throw notAnAccountType(text);
    return upper;
  },
);

/**
 * GET /accounts: every query parameter is a filter, as in Rucio: `account_type`, `account` (with
 * `*` wildcards), `identity`, and any other key as an account attribute key=value.
 */
const listingQuery = queryOf({
  account_type: z.preprocess(
    (value) => (Array.isArray(value) ? value[0] : value),
    refusedAs(
      z.enum(ACCOUNT_TYPES),
      ({ input }) =>
        new InvalidAccountType(
          `${String(input)} is an invalid account type. Choose from ${JSON.stringify(ACCOUNT_TYPES)}`,
        ),
    ).optional(),
  ),
  account: queryText().describe('An account name; `*` is a wildcard.'),
  identity: queryText().describe('Accounts this identity maps to.'),
}).catchall(queryFilter());

const accountListing = (query: z.output<typeof listingQuery>): AccountListing => {
  const { account_type: accountType, account, identity, ...rest } = query;
  const attributes = Object.entries(rest).map(([key, value]) => ({ key, value }));
  return {
    ...(accountType ? { accountType } : {}),
    ...(account === undefined
      ? {}
      : account.includes('*')
        ? { accountPattern: wildcardPattern(account) }
        : { account }),
    ...(identity === undefined ? {} : { identity }),
    attributes,
  };
};

export const registerAccountRoutes = (routes: RouteTable, services: Services): void => {
  const activeAccount = async (account: string, message: string): Promise<AccountDocument> => {
    const document = await findAccount(services.readModels, account);
    if (!document || document.status !== 'ACTIVE') throw new AccountNotFound(message);
    return document;
  };

  // Attributes.
  routes.get(
    '/accounts/:account/attr/',
    {
      accept: JSON_ONLY,
      summary: "An account's attributes, as key and value.",
      params: accountPath,
      raises: [AccountNotFound],
    },
    async (ctx, { params: { account } }) => {
      const document = await activeAccount(account, `Account ID '${account}' does not exist`);
      sendJson(
        ctx,
        document.attributes.map(({ key, value }) => ({ key, value })),
      );
    },
  );
  routes.post(
    '/accounts/:account/attr/:key',
    {
      summary: 'Sets an attribute of an account (`admin` makes it an admin).',
      params: attributePath,
      body: jsonObjectBody({
        value: attributeValue.describe('A string, boolean or number (kept as text).'),
      }),
      raises: [AccountNotFound, InvalidObject],
    },
    async (ctx, { params: { account, key }, body: { value } }) => {
      await created(ctx, services, (metadata) =>
        addAccountAttribute(services.commands, { account, key, value }, metadata),
      );
    },
  );
  routes.delete(
    '/accounts/:account/attr/:key',
    { summary: 'Removes an attribute of an account.', params: attributePath, raises: [AccountNotFound] },
    async (ctx, { params: { account, key } }) => {
      await ok(ctx, services, (metadata) => removeAccountAttribute(services.commands, { account, key }, metadata));
    },
  );

  // Scopes of an account.
  routes.get(
    '/accounts/:account/scopes/',
    {
      accept: JSON_ONLY,
      summary: 'The names of the scopes an account owns.',
      params: accountPath,
      raises: [AccountNotFound, ScopeNotFound],
    },
    async (ctx, { params: { account } }) => {
      if (!(await findAccount(services.readModels, account)))
        throw new AccountNotFound(`Account ID '${account}' does not exist`);
      const scopes = await scopeNamesOfAccount(services.readModels, account);
      if (scopes.length === 0) throw new ScopeNotFound(`no scopes found for account ID '${account}'`);
      sendJson(ctx, scopes);
    },
  );
  routes.post(
    '/accounts/:account/scopes/:scope',
    {
      summary: 'Adds a scope owned by the account.',
      params: pathOf({ account: pathText(), scope: validName('scope') }),
      body: 'none',
      raises: [AccountNotFound],
    },
    async (ctx, { params: { account, scope } }) => {
      await created(ctx, services, (metadata) => addScope(services.commands, { scope, account }, metadata));
    },
  );

  // Identities of an account.
  routes.get(
    '/accounts/:account/rules',
    {
      accept: STREAM_ONLY,
      summary:
        'The rules an account owns; every query parameter is a filter on a rule column (`state`, `rse_expression`, ...).',
      params: accountPath,
      query: queryFilters(),
    },
    async (ctx, { params: { account }, query }) => {
      const filter = ruleFilter({ ...query, account });
      await sendStream(ctx, ruleLines(services, listRules(services.readModels, filter)));
    },
  );
  routes.get(
    '/accounts/:account/identities',
    {
      accept: STREAM_ONLY,
      summary: "An account's identities: type, identity, email.",
      params: accountPath,
      raises: [AccountNotFound],
    },
    async (ctx, { params: { account } }) => {
      await activeAccount(account, `Account with ID '${account}' cannot be found`);
      const mappings = identitiesOfAccount(services.readModels, account);
      await sendStream(
        ctx,
        mapStream(mappings, (mapping) => ({
          type: mapping.identityType,
          identity: mapping.identity,
          email: mapping.email,
        })),
      );
    },
  );
  routes.post(
    '/accounts/:account/identities',
    {
      summary: 'Maps an identity to the account (creating it with its password for USERPASS).',
      params: accountPath,
      body: jsonObjectBody({
        identity: requiredText('identity', LIMITS.identityLength),
        authtype: identityType,
        email: optionalText('email', LIMITS.emailLength),
        password: optionalText('password', LIMITS.passwordLength, { multiline: true }).optional(),
        default: optionalBoolean(false),
      }),
      raises: [AccountNotFound, IdentityError, InvalidObject],
    },
    async (ctx, { params: { account }, body }) => {
      const { identity, authtype: identityType, email, password, default: isDefault } = body;
      await created(ctx, services, (metadata) =>
        grantIdentity(
          services.commands,
          { identity, identityType, account, email, password: password ?? null, isDefault },
          metadata,
        ),
      );
    },
  );
  routes.delete(
    '/accounts/:account/identities',
    {
      errors: { IdentityError: 404 },
      summary: 'Removes an identity from the account.',
      params: accountPath,
      body: jsonObjectBody({ identity: requiredText('identity', LIMITS.identityLength), authtype: identityType }),
      raises: [AccountNotFound, InvalidObject],
    },
    async (ctx, { params: { account }, body: { identity, authtype: identityType } }) => {
      await ok(ctx, services, (metadata) =>
        revokeIdentity(services.commands, { identity, identityType, account }, metadata),
      );
    },
  );

  // One account.
  routes.get(
    '/accounts/:account',
    {
      accept: JSON_ONLY,
      summary: 'One account (`whoami`: a redirect to the caller’s account).',
      params: accountPath,
      raises: [AccountNotFound],
    },
    async (ctx, { params: { account } }) => {
      if (account === 'whoami') {
        const frontend = ctx.get('X-Requested-Host');
        ctx.status = frontend ? 302 : 303;
        ctx.set('Location', frontend ? `${frontend}/accounts/${ctx.state.issuer}` : ctx.state.issuer!);
        ctx.body = '';
        return;
      }
      const document = isValidName('account', account) ? await findAccount(services.readModels, account) : null;
      if (!document) throw new AccountNotFound(`Account with ID '${account}' cannot be found`);
      sendJson(ctx, accountDetails(document));
    },
  );
  routes.put(
    '/accounts/:account',
    {
      summary: 'Changes an account’s `email` or `status`.',
      params: pathOf({ account: validName('account') }),
      body: jsonObjectBody(
        {
          // Other types are the command's to refuse, as Rucio's core refuses them.
          email: checkedBy(z.unknown(), (email) =>
            typeof email === 'string' ? checkText('email', email, LIMITS.emailLength) : email,
          ).optional(),
        },
        { description: 'The keys to change: `email`, `status` (ACTIVE, SUSPENDED).' },
      ),
      raises: [AccountNotFound],
    },
    async (ctx, { params: { account }, body: changes }) => {
      await ok(ctx, services, (metadata) => updateAccount(services.commands, { account, changes }, metadata));
    },
  );
  routes.post(
    '/accounts/:account',
    {
      summary: 'Creates an account.',
      params: pathOf({ account: validName('account') }),
      body: jsonObjectBody({ type: accountType, email: optionalText('email', LIMITS.emailLength) }),
      raises: [InvalidAccountType, InvalidObject],
    },
    async (ctx, { params: { account }, body: { type: accountType, email } }) => {
      await created(ctx, services, (metadata) =>
        createAccount(services.commands, { account, accountType, email }, metadata),
      );
    },
  );
  routes.delete(
    '/accounts/:account',
    { summary: 'Deletes an account (its status becomes DELETED).', params: accountPath, raises: [AccountNotFound] },
    async (ctx, { params: { account } }) => {
      await ok(ctx, services, (metadata) => deleteAccount(services.commands, { account }, metadata));
    },
  );

  // All accounts.
  const listing = {
    accept: STREAM_ONLY,
    summary: 'Every account, filtered by the query; any other query key is an account attribute and its value.',
    query: listingQuery,
    raises: [InvalidAccountType],
  };
  for (const path of ['/accounts', '/accounts/']) {
    routes.get(path, listing, async (ctx, { query }) => {
      const documents = await listAccounts(services.readModels, accountListing(query));
      await sendStream(
        ctx,
        mapStream(documents, (document) => ({
          account: document.account,
          type: document.accountType,
          email: document.email,
        })),
      );
    });
  }
};
