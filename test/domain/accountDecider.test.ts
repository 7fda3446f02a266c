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

  it('refuses a second account with the same name, even a deleted one', () => {
    const command = {
      type: 'CreateAccount',
      data: { account: 'jdoe', accountType: 'USER', email: null },
      metadata: metadata(),
    } as const;
    given([created])
      .when(command)
      .thenThrows(Duplicate, /Account ID 'jdoe' already exists!/);
    given([created, { type: 'AccountDeleted', data: { account: 'jdoe', deletedAt: AT } }])
      .when(command)
      .thenThrows(Duplicate);
  });

  it('refuses the reserved name super_root', () =>
    given([])
      .when({
        type: 'CreateAccount',
        data: { account: 'super_root', accountType: 'SERVICE', email: null },
        metadata: metadata(),
      })
      .thenThrows(RucioException));

  it('suspends and reactivates, and does nothing when the status is already the asked one', () => {
    const update = (value: string) =>
      ({ type: 'UpdateAccount', data: { account: 'jdoe', key: 'status', value }, metadata: metadata() }) as const;
    given([created])
      .when(update('SUSPENDED'))
      .then([{ type: 'AccountSuspended', data: { account: 'jdoe', suspendedAt: AT } }]);
    given([created, { type: 'AccountSuspended', data: { account: 'jdoe', suspendedAt: AT } }])
      .when(update('ACTIVE'))
      .then([{ type: 'AccountReactivated', data: { account: 'jdoe', reactivatedAt: AT } }]);
    given([created]).when(update('ACTIVE')).thenNothingHappened();
    given([created])
      .when(update('DELETED'))
      .thenThrows(ValueError, /Unknown value DELETED/);
  });

  it('changes the email and refuses unknown keys', () => {
    given([created])
      .when({
        type: 'UpdateAccount',
        data: { account: 'jdoe', key: 'email', value: 'new@example.org' },
        metadata: metadata(),
      })
      .then([{ type: 'AccountEmailChanged', data: { account: 'jdoe', email: 'new@example.org', changedAt: AT } }]);
    given([created])
      .when({ type: 'UpdateAccount', data: { account: 'jdoe', key: 'colour', value: 'red' }, metadata: metadata() })
      .thenThrows(ValueError, /Unknown key colour/);
  });

  it('deletes an active account once; a missing or deleted one is not found', () => {
    const remove = { type: 'DeleteAccount', data: { account: 'jdoe' }, metadata: metadata() } as const;
    const deleted: AccountEvent = { type: 'AccountDeleted', data: { account: 'jdoe', deletedAt: AT } };
    given([created]).when(remove).then([deleted]);
    given([created, deleted]).when(remove).thenThrows(AccountNotFound);
    given([]).when(remove).thenThrows(AccountNotFound);
  });

  it('adds an attribute once and removes it', () => {
    const added: AccountEvent = {
      type: 'AccountAttributeAdded',
      data: { account: 'jdoe', key: 'admin', value: 'True' },
    };
    given([created])
      .when({
        type: 'AddAccountAttribute',
        data: { account: 'jdoe', key: 'admin', value: 'True' },
        metadata: metadata(),
      })
      .then([added]);
    given([created, added])
      .when({
        type: 'AddAccountAttribute',
        data: { account: 'jdoe', key: 'admin', value: 'False' },
        metadata: metadata(),
      })
      .thenThrows(Duplicate, /Key admin already exist for account jdoe!/);
    given([created, added])
      .when({ type: 'RemoveAccountAttribute', data: { account: 'jdoe', key: 'admin' }, metadata: metadata() })
      .then([{ type: 'AccountAttributeRemoved', data: { account: 'jdoe', key: 'admin' } }]);
    given([created])
      .when({ type: 'RemoveAccountAttribute', data: { account: 'jdoe', key: 'admin' }, metadata: metadata() })
      .thenThrows(AccountNotFound, /Attribute \(admin\) does not exist/);
  });

  it('adds no attribute to a suspended account', () =>
    given([created, { type: 'AccountSuspended', data: { account: 'jdoe', suspendedAt: AT } }])
      .when({ type: 'AddAccountAttribute', data: { account: 'jdoe', key: 'k', value: 'v' }, metadata: metadata() })
      .thenThrows(AccountNotFound));

  it('revokes the sessions of an active or suspended account, and of no deleted or missing one', () => {
    const revoke = { type: 'RevokeAccountSessions', data: { account: 'jdoe' }, metadata: metadata() } as const;
    const revoked: AccountEvent = { type: 'AccountSessionsRevoked', data: { account: 'jdoe', revokedAt: AT } };
    given([created]).when(revoke).then([revoked]);
    given([created, { type: 'AccountSuspended', data: { account: 'jdoe', suspendedAt: AT } }])
      .when(revoke)
      .then([revoked]);
    given([created, { type: 'AccountDeleted', data: { account: 'jdoe', deletedAt: AT } }])
      .when(revoke)
      .thenThrows(AccountNotFound);
    given([]).when(revoke).thenThrows(AccountNotFound);
  });

  it('never deletes nor suspends root', () => {
    const root: AccountEvent = {
      type: 'AccountCreated',
      data: { account: 'root', accountType: 'SERVICE', email: null, createdAt: AT },
    };
    given([root])
      .when({ type: 'DeleteAccount', data: { account: 'root' }, metadata: metadata() })
      .thenThrows(UnsupportedOperation, /cannot be deleted/);
    given([root])
      .when({
        type: 'UpdateAccount',
        data: { account: 'root', key: 'status', value: 'SUSPENDED' },
        metadata: metadata(),
      })
      .thenThrows(UnsupportedOperation, /cannot be suspended/);
  });
});
