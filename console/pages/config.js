import { call, getJson, part } from '../lib/api.js';
import { errorBox, h, pageHead, replace } from '../lib/dom.js';

/**
 * The service's configuration (`/config`, Rucio's config table) beside what the service reads:
 * every section with its options, each showing the value in force (the stored one, or the
 * default), editable in place and reset to its default; options nobody declared are kept and
 * shown as free-form; new options are added. The daemons read a change within a cycle.
 */
export const title = 'Configuration';

/**
 * @typedef {{ section: string, option: string, default: unknown, allowed: string }} Declared
 * @typedef {{ option: string, stored: unknown, declared: Declared | undefined }} Option
 */

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const message = h('div', { 'aria-live': 'polite' });
  const sectionsBox = h('div', { id: 'config-sections' });
  const filter = h('input', {
    id: 'config-filter',
    type: 'search',
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'conveyor, interval, …',
  });
  const newSection = h('input', {
    id: 'config-new-section',
    required: true,
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'conveyor',
  });
  const newOption = h('input', {
    id: 'config-new-option',
    required: true,
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'transfertool',
  });
  const newValue = h('input', {
    id: 'config-new-value',
    required: true,
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'mock',
  });
  /** @type {Declared[]} */
  const declared = await getJson('/console/settings').catch(() => []);
  /** Sections open by the reader stay open when the page is drawn again. */
  const opened = new Set();

  /**
   * @param {string} sectionName
   * @param {string} option
   * @param {string} text
   */
  const save = async (sectionName, option, text) => {
    replace(message);
    try {
      await call('/config', { method: 'POST', body: { [sectionName]: { [option]: parseValue(text) } } });
      replace(message, h('div', { class: 'alert good', role: 'status' }, `Saved ${sectionName}.${option}.`));
      opened.add(sectionName);
      await refresh();
    } catch (error) {
      replace(message, errorBox(error));
    }
  };
  /**
   * @param {string} sectionName
   * @param {string} option
   */
  const reset = async (sectionName, option) => {
    replace(message);
    try {
      await call(`/config/${part(sectionName)}/${part(option)}`, { method: 'DELETE' });
      replace(
        message,
        h('div', { class: 'alert good', role: 'status' }, `${sectionName}.${option} is back to its default.`),
      );
      await refresh();
    } catch (error) {
      replace(message, errorBox(error));
    }
  };

  const refresh = async () => {
    /** @type {Record<string, Record<string, unknown>>} */
    const stored = await getJson('/config');
    /** @type {Map<string, Map<string, Option>>} */
    const sections = new Map();
    const optionOf = (/** @type {string} */ sectionName, /** @type {string} */ option) => {
      const options = sections.get(sectionName) ?? new Map();
      sections.set(sectionName, options);
      const found = options.get(option) ?? { option, stored: undefined, declared: undefined };
      options.set(option, found);
      return found;
    };
    for (const setting of declared) optionOf(setting.section, setting.option).declared = setting;
    for (const [sectionName, options] of Object.entries(stored))
      for (const [option, value] of Object.entries(options)) optionOf(sectionName, option).stored = value;
    const wanted = filter.value.trim().toLowerCase();
    const names = [...sections.keys()].sort();
    replace(
      sectionsBox,
      names.map((sectionName) => {
        const options = [...(sections.get(sectionName)?.values() ?? [])]
          .filter((item) => !wanted || `${sectionName}.${item.option}`.toLowerCase().includes(wanted))
          .sort((a, b) => a.option.localeCompare(b.option));
        if (options.length === 0) return null;
        const set = options.filter((item) => item.stored !== undefined).length;
        const details = h(
          'details',
          {
            class: 'card config-section',
            open: Boolean(wanted) || set > 0 || opened.has(sectionName),
            id: `section-${sectionName}`,
          },
          h(
            'summary',
            { class: 'card-head' },
            h('h2', null, sectionName),
            h(
              'span',
              { class: 'muted small' },
              `${options.length} option${options.length === 1 ? '' : 's'}${set > 0 ? `, ${set} set` : ''}`,
            ),
          ),
          h('div', { class: 'card-body' }, optionsTable(sectionName, options, save, reset)),
        );
        details.addEventListener('toggle', () => (details.open ? opened.add(sectionName) : opened.delete(sectionName)));
        return details;
      }),
    );
  };
  filter.addEventListener('input', () => void refresh());

  /** @param {SubmitEvent} event */
  const onAdd = async (event) => {
    event.preventDefault();
    await save(newSection.value.trim(), newOption.value.trim(), newValue.value);
  };

  replace(
    view.main,
    pageHead(
      'Configuration',
      'What the service and its daemons read, with the value in force. A value is stored as typed: numbers, true and false as such, text otherwise.',
    ),
    message,
    h(
      'div',
      { class: 'grid two' },
      h(
        'div',
        { class: 'card card-body' },
        h('div', { class: 'field' }, h('label', { for: 'config-filter' }, 'Find an option'), filter),
      ),
      h(
        'form',
        { class: 'card search-form', onsubmit: onAdd, 'aria-label': 'Set an option' },
        h('div', { class: 'field' }, h('label', { for: 'config-new-section' }, 'Section'), newSection),
        h('div', { class: 'field' }, h('label', { for: 'config-new-option' }, 'Option'), newOption),
        h('div', { class: 'field grow' }, h('label', { for: 'config-new-value' }, 'Value'), newValue),
        h('div', { class: 'field submit' }, h('button', { type: 'submit', class: 'button primary' }, 'Set')),
      ),
    ),
    sectionsBox,
  );
  await refresh();
};

/**
 * @param {string} sectionName
 * @param {Option[]} options
 * @param {(section: string, option: string, text: string) => Promise<void>} save
 * @param {(section: string, option: string) => Promise<void>} reset
 */
const optionsTable = (sectionName, options, save, reset) =>
  h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'config-table' },
      h('caption', { class: 'visually-hidden' }, `Options of ${sectionName}`),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', { scope: 'col' }, 'Option'),
          h('th', { scope: 'col' }, 'Value'),
          h('th', { scope: 'col' }, 'Takes'),
          h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
        ),
      ),
      h(
        'tbody',
        null,
        options.map((item) => {
          const id = `config-${sectionName}-${item.option}`.replace(/[^\w-]/g, '_');
          const isSet = item.stored !== undefined;
          const input = h('input', {
            id,
            value: isSet ? textOf(item.stored) : '',
            placeholder: item.declared ? `${textOf(item.declared.default)} (default)` : '',
            spellcheck: false,
            autocomplete: 'off',
          });
          return h(
            'tr',
            { class: isSet ? 'is-set' : '' },
            h(
              'th',
              { scope: 'row' },
              h('label', { for: id, class: 'mono' }, item.option),
              isSet ? h('span', { class: 'set-mark' }, ' set') : null,
            ),
            h('td', null, input),
            h(
              'td',
              { class: 'small muted' },
              item.declared ? item.declared.allowed : 'free-form: nothing in the service reads it',
            ),
            h(
              'td',
              { class: 'row-actions' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'button small',
                  onclick: () => save(sectionName, item.option, input.value),
                  'aria-label': `Save ${sectionName}.${item.option}`,
                },
                'Save',
              ),
              isSet
                ? h(
                    'button',
                    {
                      type: 'button',
                      class: 'button small ghost',
                      onclick: () => reset(sectionName, item.option),
                      'aria-label': `Reset ${sectionName}.${item.option}`,
                    },
                    item.declared ? 'Reset' : 'Remove',
                  )
                : null,
            ),
          );
        }),
      ),
    ),
  );

/** @param {unknown} value */
const textOf = (value) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * A typed value where the text reads as JSON (numbers, booleans), the text itself otherwise.
 * @param {string} text
 */
const parseValue = (text) => {
  const trimmed = text.trim();
  if (/^(true|false|-?\d+(\.\d+)?)$/i.test(trimmed)) return JSON.parse(trimmed.toLowerCase());
  return text;
};
