import { allLines, call, getJson, part } from '../lib/api.js';
import { badge, h, replace, rseLink, section, table, formatBytes } from '../lib/dom.js';
import { actionForm, deleteButton, field, resultBox, textInput } from '../lib/forms.js';
import { ENUMS, enumOf } from '../lib/schema.js';
import { can } from '../lib/session.js';

/**
 * What admins change on an account's page: its identities (logins), its attributes (`admin` makes
 * an admin) and its quotas per RSE. Each part shows itself again after a change, the result said
 * inside it. Only what the API lets the account viewing do is shown.
 */

/**
 * @param {HTMLElement} target
 * @param {import('../app.js').View} view
 * @param {any} account
 * @param {boolean} unbound the account is an admin (held to no quota)
 */
export const accountAdminSections = async (target, view, account, unbound) => {
  const identities = h('div', { id: 'account-identities' });
  const attributes = h('div', { id: 'account-attributes' });
  const quotas = h('div', { id: 'account-quotas' });
  const mayIdentities = can(view.who, 'addIdentity') || account.account === view.who.account;
  replace(
    target,
    mayIdentities ? identities : null,
    can(view.who, 'addAccountAttribute') ? attributes : null,
    can(view.who, 'setLocalLimits') && !unbound ? quotas : null,
  );
  const path = part(account.account);
  await Promise.all([
    mayIdentities ? showIdentities(identities, view, path) : null,
    can(view.who, 'addAccountAttribute') ? showAttributes(attributes, path) : null,
    can(view.who, 'setLocalLimits') && !unbound ? showQuotas(quotas, path) : null,
  ]);
};

/** @param {HTMLElement} target @param {import('../app.js').View} view @param {string} path @param {string} [said] */
const showIdentities = async (target, view, path, said) => {
  const [found, identityTypes] = await Promise.all([
    allLines(`/accounts/${path}/identities`).catch(() => []),
    // The types the API takes (its OpenAPI document); USERPASS, the console's own login, first chosen.
    enumOf(ENUMS.identityType),
  ]);
  const result = resultBox(said);
  const again = (/** @type {string} */ message) => showIdentities(target, view, path, message);
  const mayChange = can(view.who, 'addIdentity');
  const identity = textInput('identity-name', { required: true, placeholder: 'jdoe, or /DC=org/CN=John Doe' });
  const kind = h(
    'select',
    { id: 'identity-type' },
    identityTypes.map((value) => h('option', { value, selected: value === 'USERPASS' }, value)),
  );
  const email = textInput('identity-email', { type: 'email', required: true });
  const password = textInput('identity-password', { type: 'password', autocomplete: 'new-password' });
  replace(
    target,
    section('Identities', [
      h('p', { class: 'muted small' }, 'The logins that act as this account.'),
      table(
        ['Identity', 'Type', 'Email', ''],
        found.map((row) => [
          h('code', { class: 'break' }, row.identity),
          badge(row.type),
          row.email ?? '–',
          can(view.who, 'deleteIdentity')
            ? deleteButton({
                label: `Delete identity ${row.identity}`,
                title: `Remove the ${row.type} identity ${row.identity}?`,
                what: 'It can no longer log in as this account.',
                path: `/accounts/${path}/identities`,
                body: { identity: row.identity, authtype: row.type },
                target: result,
                after: again,
              })
            : '',
        ]),
        { empty: 'No identity: nobody can log in as this account.', caption: 'Identities' },
      ),
      mayChange
        ? actionForm({
            label: 'Add identity',
            fields: [
              field('Identity', identity, { grow: true }),
              field('Type', kind),
              field('Email', email),
              field('Password (userpass)', password),
            ],
            submit: async () => {
              await call(`/accounts/${path}/identities`, {
                method: 'POST',
                body: {
                  identity: identity.value.trim(),
                  authtype: kind.value,
                  email: email.value.trim(),
                  ...(kind.value === 'USERPASS' ? { password: password.value } : {}),
                  default: true,
                },
              });
              return `Identity ${identity.value.trim()} added.`;
            },
            after: again,
          })
        : null,
      result,
    ]),
  );
};

/** @param {HTMLElement} target @param {string} path @param {string} [said] */
const showAttributes = async (target, path, said) => {
  const found = await getJson(`/accounts/${path}/attr/`).catch(() => []);
  const result = resultBox(said);
  const again = (/** @type {string} */ message) => showAttributes(target, path, message);
  const key = textInput('account-attribute-key', { required: true, placeholder: 'admin, country-ch' });
  const value = textInput('account-attribute-value', { required: true, placeholder: 'true, admin' });
  replace(
    target,
    section('Attributes', [
      h(
        'p',
        { class: 'muted small' },
        'An attribute named admin makes the account an admin (held to no quota, every change allowed).',
      ),
      table(
        ['Key', 'Value', ''],
        found.map((/** @type {any} */ row) => [
          h('code', null, row.key),
          h('code', null, String(row.value)),
          deleteButton({
            label: `Delete attribute ${row.key}`,
            title: `Remove the attribute ${row.key}?`,
            what: row.key === 'admin' ? 'The account stops being an admin.' : 'Policies that read it no longer see it.',
            path: `/accounts/${path}/attr/${part(row.key)}`,
            target: result,
            after: again,
          }),
        ]),
        { empty: 'No attributes.', caption: 'Account attributes' },
      ),
      actionForm({
        label: 'Add attribute',
        fields: [field('Key', key), field('Value', value)],
        submit: async () => {
          await call(`/accounts/${path}/attr/${part(key.value.trim())}`, {
            method: 'POST',
            body: { key: key.value.trim(), value: value.value.trim() },
          });
          return `Attribute ${key.value.trim()} added.`;
        },
        after: again,
      }),
      result,
    ]),
  );
};

/** @param {HTMLElement} target @param {string} path @param {string} [said] */
const showQuotas = async (target, path, said) => {
  const [limits, rses] = await Promise.all([
    getJson(`/accounts/${path}/limits/local`).catch(() => ({})),
    allLines('/rses/', 2000).catch(() => []),
  ]);
  const result = resultBox(said);
  const again = (/** @type {string} */ message) => showQuotas(target, path, message);
  const rse = h(
    'select',
    { id: 'quota-rse', required: true },
    rses.map((row) => h('option', { value: row.rse }, row.rse)),
  );
  const amount = textInput('quota-bytes', { required: true, placeholder: '10 TB, 500 GB, 1000000' });
  replace(
    target,
    section('Set quotas', [
      table(
        ['RSE', 'Quota', ''],
        Object.entries(limits).map(([name, bytes]) => [
          rseLink(name),
          formatBytes(Number(bytes)),
          deleteButton({
            label: `Delete quota on ${name}`,
            title: `Remove the quota on ${name}?`,
            what: 'Without a quota the account cannot place new copies there.',
            path: `/accountlimits/local/${path}/${part(name)}`,
            target: result,
            after: again,
          }),
        ]),
        {
          empty: 'No quota on any RSE: the account cannot ask for copies yet.',
          numeric: [1],
          caption: 'Quotas per RSE',
        },
      ),
      actionForm({
        label: 'Set quota',
        fields: [field('RSE', rse), field('Quota', amount, { hint: 'bytes, or with kB, MB, GB, TB, PB' })],
        submit: async () => {
          const bytes = parseBytes(amount.value);
          if (bytes === undefined) throw new Error(`“${amount.value}” is not an amount of bytes.`);
          await call(`/accountlimits/local/${path}/${part(rse.value)}`, { method: 'POST', body: { bytes } });
          return `Quota on ${rse.value} set to ${formatBytes(bytes)}.`;
        },
        after: again,
      }),
      result,
    ]),
  );
};

/**
 * An amount typed with a decimal unit, as the console shows them: `10 TB`, `1.5GB`, `1000`.
 * @param {string} text
 */
export const parseBytes = (text) => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(B|kB|KB|MB|GB|TB|PB)?\s*$/i.exec(text);
  if (!match) return undefined;
  const units = /** @type {Record<string, number>} */ ({ B: 1, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, PB: 1e15 });
  return Math.round(Number(match[1]) * (units[(match[2] ?? 'B').toUpperCase()] ?? 1));
};
