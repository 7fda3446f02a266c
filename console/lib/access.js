import { getJson, part } from './api.js';
import { can } from './session.js';

/**
 * Where what the API allows depends on the object: a DID's history is open to admins and to the
 * owner of its scope (domain/permission/auditPolicy.ts), so the console offers it only there.
 */

/** @type {Map<string, Promise<string[]>>} */
const scopesOf = new Map();

/**
 * The scopes an account owns (read once per page load).
 * @param {string} account
 */
export const ownedScopes = (account) => {
  let found = scopesOf.get(account);
  if (!found) {
    // An account without a scope is answered 404 ScopeNotFound: it owns none.
    found = getJson(`/accounts/${part(account)}/scopes/`).catch(() => []);
    scopesOf.set(account, found);
  }
  return found;
};

/**
 * @param {import('./session.js').Who} who
 * @param {string} scope
 */
export const mayReadDidHistory = async (who, scope) =>
  can(who, 'readHistory') || (await ownedScopes(who.account)).includes(scope);
