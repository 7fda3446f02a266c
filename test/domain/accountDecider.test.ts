import { accountDecider } from '../../domain/account/accountDecider.ts';
import type { AccountEvent } from '../../domain/account/account.ts';
import {
  AccountNotFound,
  Duplicate,
  RucioException,
  UnsupportedOperation,
  ValueError,
} from '../../domain/shared/errors.ts';
import { AT, deciderSpec, metadata } from '../support/deciderSpec.ts';

const given = deciderSpec(accountDecider);
const created: AccountEvent = {
  type: 'AccountCreated',
  data: { account: 'jdoe', accountType: 'USER', email: 'jdoe@example.org', createdAt: AT },
};

describe('account decider', () => {
  it('creates an account', () =>
    given([])
      .when({
        type: 'CreateAccount',
        data: { account: 'jdoe', accountType: 'USER', email: 'jdoe@example.org' },
        metadata: metadata(),
      })
      .then([created]));

  describe('when a second account with the same name is created', () => {
    const command = {
      type: 'CreateAccount',
      data: { account: 'jdoe', accountType: 'USER', email: null },
      metadata: metadata(),
    } as const;
    it('refuses it', () =>
      given([created])
        .when(command)
        .thenThrows(Duplicate, /Account ID 'jdoe' already exists!/));
    it('refuses it even when the first was deleted', () =>
      given([created, { type: 'AccountDeleted', data: { account: 'jdoe', deletedAt: AT } }])
        .when(command)
        .thenThrows(Duplicate));
  });

  it('refuses the reserved name super_root', () =>
    given([])
      .when({
        type: 'CreateAccount',
        data: { account: 'super_root', accountType: 'SERVICE', email: null },
        metadata: metadata(),
      })
      .thenThrows(RucioException));

  describe('when the status is updated', () => {
    const update = (value: string) =>
      ({ type: 'UpdateAccount', data: { account: 'jdoe', key: 'status', value }, metadata: metadata() }) as const;
    it('suspends an active account', () =>
      given([created])
        .when(update('SUSPENDED'))
        .then([{ type: 'AccountSuspended', data: { account: 'jdoe', suspendedAt: AT } }]));
    it('reactivates a suspended account', () =>
      given([created, { type: 'AccountSuspended', data: { account: 'jdoe', suspendedAt: AT } }])
        .when(update('ACTIVE'))
        .then([{ type: 'AccountReactivated', data: { account: 'jdoe', reactivatedAt: AT } }]));
    it('does nothing when the status is already the asked one', () =>
      given([created]).when(update('ACTIVE')).thenNothingHappened());
    it('refuses a status that cannot be asked for', () =>
      given([created])
        .when(update('DELETED'))
        .thenThrows(ValueError, /Unknown value DELETED/));
  });

  describe('when another key is updated', () => {
    it('changes the email', () =>
      given([created])
        .when({
          type: 'UpdateAccount',
          data: { account: 'jdoe', key: 'email', value: 'new@example.org' },
          metadata: metadata(),
        })
        .then([{ type: 'AccountEmailChanged', data: { account: 'jdoe', email: 'new@example.org', changedAt: AT } }]));
    it('refuses an unknown key', () =>
      given([created])
        .when({ type: 'UpdateAccount', data: { account: 'jdoe', key: 'colour', value: 'red' }, metadata: metadata() })
        .thenThrows(ValueError, /Unknown key colour/));
  });

  describe('when an account is deleted', () => {
    const remove = { type: 'DeleteAccount', data: { account: 'jdoe' }, metadata: metadata() } as const;
    const deleted: AccountEvent = { type: 'AccountDeleted', data: { account: 'jdoe', deletedAt: AT } };
    it('deletes an active account', () => given([created]).when(remove).then([deleted]));
    it('finds a deleted account no more', () => given([created, deleted]).when(remove).thenThrows(AccountNotFound));
    it('finds no missing account', () => given([]).when(remove).thenThrows(AccountNotFound));
  });

  describe('when attributes are added and removed', () => {
    const added: AccountEvent = {
      type: 'AccountAttributeAdded',
      data: { account: 'jdoe', key: 'admin', value: 'True' },
    };
    const remove = {
      type: 'RemoveAccountAttribute',
      data: { account: 'jdoe', key: 'admin' },
      metadata: metadata(),
    } as const;
    it('adds an attribute', () =>
      given([created])
        .when({
          type: 'AddAccountAttribute',
          data: { account: 'jdoe', key: 'admin', value: 'True' },
          metadata: metadata(),
        })
        .then([added]));
    it('adds an attribute only once', () =>
      given([created, added])
        .when({
          type: 'AddAccountAttribute',
          data: { account: 'jdoe', key: 'admin', value: 'False' },
          metadata: metadata(),
        })
        .thenThrows(Duplicate, /Key admin already exist for account jdoe!/));
    it('removes an attribute', () =>
      given([created, added])
        .when(remove)
        .then([{ type: 'AccountAttributeRemoved', data: { account: 'jdoe', key: 'admin' } }]));
    it('refuses to remove an attribute the account does not have', () =>
      given([created])
        .when(remove)
        .thenThrows(AccountNotFound, /Attribute \(admin\) does not exist/));
  });

  it('adds no attribute to a suspended account', () =>
    given([created, { type: 'AccountSuspended', data: { account: 'jdoe', suspendedAt: AT } }])
      .when({ type: 'AddAccountAttribute', data: { account: 'jdoe', key: 'k', value: 'v' }, metadata: metadata() })
      .thenThrows(AccountNotFound));

  describe('when the sessions of an account are revoked', () => {
    const revoke = { type: 'RevokeAccountSessions', data: { account: 'jdoe' }, metadata: metadata() } as const;
    const revoked: AccountEvent = { type: 'AccountSessionsRevoked', data: { account: 'jdoe', revokedAt: AT } };
    it('revokes those of an active account', () => given([created]).when(revoke).then([revoked]));
    it('revokes those of a suspended account', () =>
      given([created, { type: 'AccountSuspended', data: { account: 'jdoe', suspendedAt: AT } }])
        .when(revoke)
        .then([revoked]));
    it('finds no deleted account', () =>
      given([created, { type: 'AccountDeleted', data: { account: 'jdoe', deletedAt: AT } }])
        .when(revoke)
        .thenThrows(AccountNotFound));
    it('finds no missing account', () => given([]).when(revoke).thenThrows(AccountNotFound));
  });

  describe('given root', () => {
    const root: AccountEvent = {
      type: 'AccountCreated',
      data: { account: 'root', accountType: 'SERVICE', email: null, createdAt: AT },
    };
    it('never deletes it', () =>
      given([root])
        .when({ type: 'DeleteAccount', data: { account: 'root' }, metadata: metadata() })
        .thenThrows(UnsupportedOperation, /cannot be deleted/));
    it('never suspends it', () =>
      given([root])
        .when({
          type: 'UpdateAccount',
          data: { account: 'root', key: 'status', value: 'SUSPENDED' },
          metadata: metadata(),
        })
        .thenThrows(UnsupportedOperation, /cannot be suspended/));
  });
});
