import { expect } from 'chai';
import { ensureRootAccount } from '../../commands/bootstrap.ts';
import { commandSpec, SPEC_NOW } from '../support/commandSpec.ts';

/**
 * Root at start-up (issue 33, item 2): processes that start together on an empty store may all
 * find root missing and all try to create it; every one of them comes up, and root is created
 * once. (test/bin/concurrentStart.test.ts starts the processes themselves.)
 */
describe('Start-up: root created once, whoever starts at the same time', () => {
  const spec = commandSpec();
  const root = { username: 'ddmlab', password: 'secret', email: 'root@localhost' };

  it('creates root, its userpass identity and the mapping once when four starts race on an empty store', () =>
    spec
      .given([])
      .when(async (context) => {
        const outcomes = await Promise.all(Array.from({ length: 4 }, () => ensureRootAccount(context, root, SPEC_NOW)));
        expect(outcomes).to.include('created');
      })
      .thenAppended((events) =>
        expect(events.map((event) => `${event.stream} ${event.type}`)).to.deep.equal([
          'account-root AccountCreated',
          'identity-USERPASS-ddmlab IdentityAdded',
          'identity-USERPASS-ddmlab IdentityGrantedToAccount',
        ]),
      ));

  it('changes nothing at a later start, and says root existed', () =>
    spec
      .given((context) => ensureRootAccount(context, root, SPEC_NOW))
      .when(async (context) => expect(await ensureRootAccount(context, root, SPEC_NOW)).to.equal('existing'))
      .thenNothingHappened());
});
