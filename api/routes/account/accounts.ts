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
import { jsonObject, param, paramBoolean } from '../../params.ts';
import { created, ok, type RouteOptions, type RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';
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
const attributeValue = (value: unknown): string => {
  const text =
    typeof value === 'boolean' ? (value ? 'True' : 'False') : typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string')
    throw new InvalidObject(`Problem validating account_attribute: ${JSON.stringify(value)} is not of type 'string'`);
  assertValidName('account_attribute', text);
  return text;
};

const identityTypeOf = (value: unknown): IdentityType => {
  const upper = typeof value === 'string' ? value.toUpperCase() : '';
  if (!isOneOf(IDENTITY_TYPES, upper)) {
    throw new IdentityError(`${String(value)} is not a valid identity type. Choose from ${IDENTITY_TYPES.join(', ')}`);
  }
  return upper;
};

const requiredText = (parameters: Record<string, unknown>, name: string, maxLength: number): string => {
  const value = param(parameters, name);
  if (typeof value !== 'string' || value === '')
    throw new InvalidObject(`Problem validating ${name}: ${JSON.stringify(value)} is not a non-empty string`);
  return checkText(name, value, maxLength);
};

const optionalText = (
  value: unknown,
  name: string,
  maxLength: number,
  options: { multiline?: boolean } = {},
): string | null => {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string')
    throw new InvalidObject(`Problem validating ${name}: ${JSON.stringify(value)} is not of type 'string'`);
  return checkText(name, value, maxLength, options);
};

/** An attribute key: Rucio's pattern, and never a prototype property's name (`constructor` fits the pattern). */
const attributeKey = (key: string): string => {
  assertValidName('account_attribute', key);
  if (PROTOTYPE_KEYS.has(key)) throw new InvalidObject(`Problem validating account_attribute: '${key}' is reserved`);
  return key;
};

/**
 * GET /accounts: every query parameter is a filter, as in Rucio: `account_type`, `identity`,
 * `account` (with `*` wildcards), and any other key as an account attribute key=value.
 */
const accountListing = (ctx: AppContext): AccountListing => {
  const listing: { accountType?: AccountType; account?: string; accountPattern?: string; identity?: string } = {};
  const attributes: { key: string; value: string }[] = [];
  for (const [key, raw] of Object.entries(ctx.query)) {
    const value = Array.isArray(raw) ? raw[0]! : raw!;
    if (key === 'account_type') {
      if (!isOneOf(ACCOUNT_TYPES, value)) {
        throw new InvalidAccountType(
          `${value} is an invalid account type. Choose from ${JSON.stringify(ACCOUNT_TYPES)}`,
        );
      }
      listing.accountType = value;
    } else if (key === 'account') {
      if (value.includes('*')) listing.accountPattern = wildcardPattern(value);
      else listing.account = value;
    } else if (key === 'identity') {
      listing.identity = value;
    } else {
      attributes.push({ key, value });
    }
  }
  return { ...listing, attributes };
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
    { accept: JSON_ONLY, summary: "An account's attributes, as key and value.", raises: [AccountNotFound] },
    async (ctx) => {
      const document = await activeAccount(ctx.params.account!, `Account ID '${ctx.params.account}' does not exist`);
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
      body: { description: '`value`: a string, boolean or number (kept as text).' },
      raises: [AccountNotFound, InvalidObject],
    },
    async (ctx) => {
      const parameters = jsonObject(ctx);
      const key = attributeKey(ctx.params.key!);
      const value = attributeValue(param(parameters, 'value'));
      await created(ctx, services, (metadata) =>
        addAccountAttribute(services.commands, { account: ctx.params.account!, key, value }, metadata),
      );
    },
  );
  routes.delete(
    '/accounts/:account/attr/:key',
    { summary: 'Removes an attribute of an account.', raises: [AccountNotFound] },
    async (ctx) => {
      const key = attributeKey(ctx.params.key!);
      await ok(ctx, services, (metadata) =>
        removeAccountAttribute(services.commands, { account: ctx.params.account!, key }, metadata),
      );
    },
  );

  // Scopes of an account.
  routes.get(
    '/accounts/:account/scopes/',
    {
      accept: JSON_ONLY,
      summary: 'The names of the scopes an account owns.',
      raises: [AccountNotFound, ScopeNotFound],
    },
    async (ctx) => {
      const account = ctx.params.account!;
      if (!(await findAccount(services.readModels, account)))
        throw new AccountNotFound(`Account ID '${account}' does not exist`);
      const scopes = await scopeNamesOfAccount(services.readModels, account);
      if (scopes.length === 0) throw new ScopeNotFound(`no scopes found for account ID '${account}'`);
      sendJson(ctx, scopes);
    },
  );
  routes.post(
    '/accounts/:account/scopes/:scope',
    { summary: 'Adds a scope owned by the account.', body: 'none', raises: [AccountNotFound] },
    async (ctx) => {
      assertValidName('scope', ctx.params.scope!);
      await created(ctx, services, (metadata) =>
        addScope(services.commands, { scope: ctx.params.scope!, account: ctx.params.account! }, metadata),
      );
    },
  );

  // Identities of an account.
  routes.get(
    '/accounts/:account/rules',
    {
      accept: STREAM_ONLY,
      summary:
        'The rules an account owns; every query parameter is a filter on a rule column (`state`, `rse_expression`, ...).',
    },
    async (ctx) => {
      const query = Object.fromEntries(
        Object.entries(ctx.query).map(([key, value]) => [key, Array.isArray(value) ? value[0]! : String(value)]),
      );
      const filter = ruleFilter({ ...query, account: ctx.params.account! });
      await sendStream(ctx, ruleLines(services, listRules(services.readModels, filter)));
    },
  );
  routes.get(
    '/accounts/:account/identities',
    { accept: STREAM_ONLY, summary: "An account's identities: type, identity, email.", raises: [AccountNotFound] },
    async (ctx) => {
      const account = ctx.params.account!;
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
      body: {
        description:
          '`identity`, `authtype` (USERPASS, X509, GSS, SSH, SAML, OIDC), `email`, `password` (USERPASS), `default`.',
      },
      raises: [AccountNotFound, IdentityError, InvalidObject],
    },
    async (ctx) => {
      const parameters = jsonObject(ctx);
      const identity = requiredText(parameters, 'identity', LIMITS.identityLength);
      const identityType = identityTypeOf(param(parameters, 'authtype'));
      const email = optionalText(param(parameters, 'email'), 'email', LIMITS.emailLength);
      const password = optionalText(parameters.password, 'password', LIMITS.passwordLength, { multiline: true });
      const isDefault = paramBoolean(parameters, 'default', false);
      await created(ctx, services, (metadata) =>
        grantIdentity(
          services.commands,
          { identity, identityType, account: ctx.params.account!, email, password, isDefault },
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
      body: { description: '`identity` and `authtype`.' },
      raises: [AccountNotFound, InvalidObject],
    },
    async (ctx) => {
      const parameters = jsonObject(ctx);
      const identity = requiredText(parameters, 'identity', LIMITS.identityLength);
      const identityType = identityTypeOf(param(parameters, 'authtype'));
      await ok(ctx, services, (metadata) =>
        revokeIdentity(services.commands, { identity, identityType, account: ctx.params.account! }, metadata),
      );
    },
  );

  // One account.
  routes.get(
    '/accounts/:account',
    {
      accept: JSON_ONLY,
      summary: 'One account (`whoami`: a redirect to the caller’s account).',
      raises: [AccountNotFound],
    },
    async (ctx) => {
      const account = ctx.params.account!;
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
      body: { description: 'The keys to change: `email`, `status` (ACTIVE, SUSPENDED).' },
      raises: [AccountNotFound],
    },
    async (ctx) => {
      const changes = jsonObject(ctx);
      assertValidName('account', ctx.params.account!);
      if (typeof changes.email === 'string') checkText('email', changes.email, LIMITS.emailLength);
      await ok(ctx, services, (metadata) =>
        updateAccount(services.commands, { account: ctx.params.account!, changes }, metadata),
      );
    },
  );
  routes.post(
    '/accounts/:account',
    {
      summary: 'Creates an account.',
      body: { description: '`type` (USER, GROUP, SERVICE) and `email`.' },
      raises: [InvalidAccountType, InvalidObject],
    },
    async (ctx) => {
      const parameters = jsonObject(ctx);
      const type = param(parameters, 'type');
      const email = optionalText(param(parameters, 'email'), 'email', LIMITS.emailLength);
      const account = ctx.params.account!;
      assertValidName('account', account);
      const accountType = typeof type === 'string' ? type.toUpperCase() : '';
      if (!isOneOf(ACCOUNT_TYPES, accountType)) {
        throw new InvalidAccountType(
          `${String(type)} is an invalid account type. Choose from ${JSON.stringify(ACCOUNT_TYPES)}`,
        );
      }
      await created(ctx, services, (metadata) =>
        createAccount(services.commands, { account, accountType, email }, metadata),
      );
    },
  );
  routes.delete(
    '/accounts/:account',
    { summary: 'Deletes an account (its status becomes DELETED).', raises: [AccountNotFound] },
    async (ctx) => {
      await ok(ctx, services, (metadata) =>
        deleteAccount(services.commands, { account: ctx.params.account! }, metadata),
      );
    },
  );

  // All accounts.
  const listing: RouteOptions = {
    accept: STREAM_ONLY,
    summary: 'Every account, filtered by the query; any other query key is an account attribute and its value.',
    query: {
      account_type: 'USER, GROUP or SERVICE.',
      account: 'An account name; `*` is a wildcard.',
      identity: 'Accounts this identity maps to.',
    },
    raises: [InvalidAccountType],
  };
  for (const path of ['/accounts', '/accounts/']) {
    routes.get(path, listing, async (ctx) => {
      const documents = await listAccounts(services.readModels, accountListing(ctx));
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
