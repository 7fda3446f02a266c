import { AUDIT_PERMISSIONS } from './auditPolicy.ts';
import { OPERATIONS_PERMISSIONS } from './operationsPolicy.ts';
import { ACCOUNT_PERMISSIONS, type Caller } from './policy.ts';
import { REPLICA_PERMISSIONS } from './replicaPolicy.ts';
import { administeredCountries, RSE_PERMISSIONS } from './rsePolicy.ts';
import { RULE_PERMISSIONS } from './rulePolicy.ts';
import { LIFETIME_EXCEPTION_PERMISSIONS, SUBSCRIPTION_PERMISSIONS } from './subscriptionPolicy.ts';

/**
 * What the web console may offer a caller: each flag is the answer of the permission the API
 * itself checks for that action, asked with the caller alone. The console shows a button or a
 * form only where its flag is true, so a plain account is never offered what the API would
 * refuse; the API still decides every request. Where the API's answer also depends on the object
 * (a country admin's quota on an RSE of their country, the history of a DID in one's own scope),
 * the flag says whether the caller may do it anywhere and the console narrows it further
 * (docs/console.md, "Permissions").
 */
export const consolePermissions = (caller: Caller) => ({
  updateRule: RULE_PERMISSIONS.updateRule(caller),
  deleteRule: RULE_PERMISSIONS.deleteRule(caller),
  approveRule: RULE_PERMISSIONS.approveRule(caller),
  addLockedRule: RULE_PERMISSIONS.addRule(caller, { account: caller.account, locked: true }),
  addRuleForOthers: RULE_PERMISSIONS.addRule(caller, { account: '', locked: false }),
  addAccount: ACCOUNT_PERMISSIONS.addAccount(caller),
  deleteAccount: ACCOUNT_PERMISSIONS.deleteAccount(caller),
  updateAccount: ACCOUNT_PERMISSIONS.updateAccount(caller),
  addIdentity: ACCOUNT_PERMISSIONS.addIdentity(caller),
  deleteIdentity: ACCOUNT_PERMISSIONS.deleteIdentity(caller),
  addAccountAttribute: ACCOUNT_PERMISSIONS.addAttribute(caller),
  addScope: ACCOUNT_PERMISSIONS.addScope(caller),
  revokeSessions: ACCOUNT_PERMISSIONS.revokeSessions(caller),
  config: ACCOUNT_PERMISSIONS.config(caller),
  setLocalLimits: RSE_PERMISSIONS.setLimits(caller) || administeredCountries(caller).size > 0,
  addRse: RSE_PERMISSIONS.addRse(caller),
  updateRse: RSE_PERMISSIONS.updateRse(caller),
  addRseAttribute: RSE_PERMISSIONS.addAttribute(caller),
  deleteRseAttribute: RSE_PERMISSIONS.deleteAttribute(caller),
  addProtocol: RSE_PERMISSIONS.addProtocol(caller),
  deleteProtocol: RSE_PERMISSIONS.deleteProtocol(caller),
  setDistance: RSE_PERMISSIONS.addDistance(caller) && RSE_PERMISSIONS.updateDistance(caller),
  deleteDistance: RSE_PERMISSIONS.deleteDistance(caller),
  setRseLimits: RSE_PERMISSIONS.setLimits(caller),
  declareBad: REPLICA_PERMISSIONS.declareBad(caller),
  declareSuspicious: REPLICA_PERMISSIONS.declareSuspicious(caller),
  addSubscription: SUBSCRIPTION_PERMISSIONS.addSubscription(caller),
  updateSubscription: SUBSCRIPTION_PERMISSIONS.updateSubscription(caller),
  decideLifetimeException: LIFETIME_EXCEPTION_PERMISSIONS.updateException(caller),
  readHistory: AUDIT_PERMISSIONS.readHistory(caller),
  readProjections: AUDIT_PERMISSIONS.readProjections(caller),
  rebuildProjection: AUDIT_PERMISSIONS.rebuildProjection(caller),
  readDaemons: OPERATIONS_PERMISSIONS.readDaemons(caller),
  readTransfers: OPERATIONS_PERMISSIONS.readTransfers(caller),
});

export type ConsolePermissions = ReturnType<typeof consolePermissions>;
