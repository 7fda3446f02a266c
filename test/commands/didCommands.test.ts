import { addCollections } from '../../commands/did/didCreationCommands.ts';
import { attachDids, detachDids } from '../../commands/did/didContentCommands.ts';
import { AccessDenied, ScopeNotFound } from '../../domain/shared/errors.ts';
import { as, commandSpec, SPEC_NOW } from '../support/commandSpec.ts';
import { accountCreated, collectionCreated, fileCreated, scopeAdded } from '../support/given.ts';

const at = SPEC_NOW.toISOString();
const newDataset = (scope: string, name: string) => ({
  scope,
  name,
  didType: 'DATASET' as const,
  monotonic: false,
  lifetime: null,
  meta: {},
  children: [],
});
const owners = [accountCreated('alice'), accountCreated('bob'), scopeAdded('user.alice', 'alice')];

describe('Commands: data identifiers', () => {
  const spec = commandSpec();

  describe('creating a dataset', () => {
    it('records it, owned by the caller, in a scope the caller owns', () =>
      spec
        .given(owners)
        .when((context) =>
          addCollections(context, { dids: [newDataset('user.alice', 'ds')], single: true }, as('alice')),
        )
        .then([
          {
            stream: 'did-user.alice:ds',
            type: 'DidCreated',
            data: {
              scope: 'user.alice',
              name: 'ds',
              didType: 'DATASET',
              account: 'alice',
              createdAt: at,
              expiredAt: null,
              monotonic: false,
              isNew: true,
              bytes: null,
              adler32: null,
              md5: null,
              guid: null,
              events: null,
              replicas: [],
            },
          },
        ]));

    it("refuses an account in someone else's scope", () =>
      spec
        .given(owners)
        .when((context) => addCollections(context, { dids: [newDataset('user.alice', 'ds')], single: true }, as('bob')))
        .thenRefused(AccessDenied, /Account bob can not add data identifier to scope user.alice/));

    it('refuses a scope that does not exist (behaviour rule 1)', () =>
      spec
        .given(owners)
        .when((context) =>
          addCollections(context, { dids: [newDataset('user.nobody', 'ds')], single: true }, as('root')),
        )
        .thenRefused(ScopeNotFound));
  });

  describe('attaching files to a dataset', () => {
    const history = [
      ...owners,
      collectionCreated('user.alice', 'ds', 'DATASET', 'alice'),
      fileCreated('user.alice', 'f1', 'alice'),
    ];

    it('records one batch with the file facts and the totals after it', () =>
      spec
        .given(history)
        .when((context) =>
          attachDids(
            context,
            {
              attachments: [{ scope: 'user.alice', name: 'ds', children: [{ scope: 'user.alice', name: 'f1' }] }],
              ignoreDuplicates: false,
              single: true,
            },
            as('alice'),
          ),
        )
        .then([
          {
            stream: 'did-user.alice:ds',
            type: 'DidsAttached',
            data: {
              scope: 'user.alice',
              name: 'ds',
              didType: 'DATASET',
              children: [
                {
                  scope: 'user.alice',
                  name: 'f1',
                  didType: 'FILE',
                  bytes: 100,
                  adler32: '0cc737eb',
                  md5: null,
                  guid: null,
                  events: null,
                },
              ],
              totals: { length: 1, bytes: 100, events: 0 },
              attachedAt: at,
            },
          },
        ]));

    it("refuses an account that does not own the dataset's scope", () =>
      spec
        .given(history)
        .when((context) =>
          attachDids(
            context,
            {
              attachments: [{ scope: 'user.alice', name: 'ds', children: [{ scope: 'user.alice', name: 'f1' }] }],
              ignoreDuplicates: false,
              single: true,
            },
            as('bob'),
          ),
        )
        .thenRefused(AccessDenied));
  });

  describe('detaching from a dataset', () => {
    it('refuses an account that does not own the scope', () =>
      spec
        .given([...owners, collectionCreated('user.alice', 'ds', 'DATASET', 'alice')])
        .when((context) =>
          detachDids(
            context,
            { scope: 'user.alice', name: 'ds', children: [{ scope: 'user.alice', name: 'f1' }] },
            as('bob'),
          ),
        )
        .thenRefused(AccessDenied, /Account bob can not detach data identifiers from user.alice:ds/));
  });
});
