import { addAccountAttribute, createAccount, deleteAccount } from '../../commands/account/accountCommands.ts';
import { AccessDenied, AccountNotFound, Duplicate } from '../../domain/shared/errors.ts';
import { as, commandSpec, SPEC_NOW } from '../support/commandSpec.ts';
import { accountCreated, adminAttributeAdded } from '../support/given.ts';

const at = SPEC_NOW.toISOString();

describe('Commands: accounts', () => {
  const spec = commandSpec();

  describe('creating an account', () => {
    it('records it when root asks', () =>
      spec
        .given([])
        .when((context) => createAccount(context, { account: 'jdoe', accountType: 'USER', email: null }, as('root')))
        .then([
          {
            stream: 'account-jdoe',
            type: 'AccountCreated',
            data: { account: 'jdoe', accountType: 'USER', email: null, createdAt: at },
          },
        ]));

    it('refuses an account with the admin attribute: only root adds accounts', () =>
      spec
        .given([accountCreated('ops'), adminAttributeAdded('ops')])
        .when((context) => createAccount(context, { account: 'jdoe', accountType: 'SERVICE', email: null }, as('ops')))
        .thenRefused(AccessDenied, /Account ops can not add account/));

    it('refuses a plain account', () =>
      spec
        .given([accountCreated('alice')])
        .when((context) => createAccount(context, { account: 'jdoe', accountType: 'USER', email: null }, as('alice')))
        .thenRefused(AccessDenied, /Account alice can not add account/));

    it('refuses a name that is taken', () =>
      spec
        .given([accountCreated('jdoe')])
        .when((context) => createAccount(context, { account: 'jdoe', accountType: 'USER', email: null }, as('root')))
        .thenRefused(Duplicate));
  });

  describe('deleting an account', () => {
    it('marks it deleted', () =>
      spec
        .given([accountCreated('jdoe')])
        .when((context) => deleteAccount(context, { account: 'jdoe' }, as('root')))
        .then([{ stream: 'account-jdoe', type: 'AccountDeleted', data: { account: 'jdoe', deletedAt: at } }]));

    it('refuses an account that does not exist', () =>
      spec
        .given([])
        .when((context) => deleteAccount(context, { account: 'nobody' }, as('root')))
        .thenRefused(AccountNotFound));
  });

  describe('adding an attribute', () => {
    it('records it when an admin asks', () =>
      spec
        .given([accountCreated('ops'), adminAttributeAdded('ops'), accountCreated('jdoe')])
        .when((context) =>
          addAccountAttribute(context, { account: 'jdoe', key: 'country-fr', value: 'admin' }, as('ops')),
        )
        .then([
          {
            stream: 'account-jdoe',
            type: 'AccountAttributeAdded',
            data: { account: 'jdoe', key: 'country-fr', value: 'admin' },
          },
        ]));

    it('refuses a plain account, even on itself', () =>
      spec
        .given([accountCreated('alice')])
        .when((context) => addAccountAttribute(context, { account: 'alice', key: 'admin', value: 'True' }, as('alice')))
        .thenRefused(AccessDenied));
  });
});
