import { allLines, call, part } from '../lib/api.js';
import { badge, h, pageHead, replace, rseLink, section, table } from '../lib/dom.js';
import { actionForm, field, resultBox, textInput } from '../lib/forms.js';
import { ENUMS, enumOf } from '../lib/schema.js';
import { can } from '../lib/session.js';

/**
 * The storage elements: each with its type, where it is and what it is open for; admins add new
 * ones here (then set their protocols, attributes and distances on the RSE's page).
 */
export const title = 'Storage elements';

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const list = h('div', { id: 'rse-list' });
  const filter = textInput('rse-filter', { type: 'search', placeholder: 'part of a name' });
  replace(
    view.main,
    pageHead(
      'Storage elements',
      'Every RSE: its type, where it is, and whether it can be read, written and deleted from.',
    ),
    h('div', { class: 'card search-form' }, field('Show RSEs whose name contains', filter, { grow: true })),
    list,
    can(view.who, 'addRse') ? h('div', { id: 'rse-add' }) : null,
  );
  /** @type {any[]} */
  let rses = [];
  const show = () => {
    const text = filter.value.trim().toUpperCase();
    const open = (/** @type {boolean} */ flag) => badge(flag ? 'YES' : 'NO');
    replace(
      list,
      section(
        `${rses.length} storage element${rses.length === 1 ? '' : 's'}`,
        table(
          ['RSE', 'Type', 'Location', 'Read', 'Write', 'Delete', 'Deterministic'],
          rses
            .filter((rse) => !text || rse.rse.includes(text))
            .map((rse) => [
              rseLink(rse.rse),
              badge(rse.rse_type),
              [rse.city, rse.country_name].filter(Boolean).join(', ') || h('span', { class: 'muted' }, '–'),
              open(rse.availability_read),
              open(rse.availability_write),
              open(rse.availability_delete),
              rse.deterministic ? 'yes' : 'no',
            ]),
          { empty: 'No storage element matches.', caption: 'Storage elements' },
        ),
      ),
    );
  };
  const load = async () => {
    rses = await allLines('/rses/', 5000);
    show();
  };
  filter.addEventListener('input', show);
  await load();
  const addBox = view.main.querySelector('#rse-add');
  if (addBox instanceof HTMLElement) {
    // The types the API takes (its OpenAPI document); the form appears once they are known.
    const rseTypes = await enumOf(ENUMS.rseType);
    /** @param {string} [said] */
    const showAdd = (said) => {
      const name = textInput('rse-new-name', {
        required: true,
        placeholder: 'SITE_DATADISK',
        pattern: '[A-Z0-9_-]+',
        title: 'Capitals, digits, _ and -',
      });
      const type = h(
        'select',
        { id: 'rse-new-type' },
        rseTypes.map((value) => h('option', { value }, value)),
      );
      const city = textInput('rse-new-city', { placeholder: 'Geneva' });
      replace(
        addBox,
        section('Add a storage element', [
          actionForm({
            label: 'Add RSE',
            fields: [field('Name', name, { grow: true }), field('Type', type), field('City', city)],
            submit: async () => {
              const rse = name.value.trim();
              await call(`/rses/${part(rse)}`, {
                method: 'POST',
                body: { rse_type: type.value, ...(city.value.trim() ? { city: city.value.trim() } : {}) },
              });
              return `${rse} added: give it protocols and distances on its page.`;
            },
            after: async (message) => {
              await load();
              showAdd(message);
            },
          }),
          resultBox(said),
        ]),
      );
    };
    showAdd();
  }
};
