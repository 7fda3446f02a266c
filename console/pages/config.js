import { call, getJson, part } from '../lib/api.js';
import { errorBox, h, replace, section } from '../lib/dom.js';

/**
 * The service's configuration (`/config`, Rucio's config table): every section with its options,
 * each editable in place (the value as JSON: numbers, true/false, or text), removable, and new
 * options added. Changes take effect as the daemons read them, within a cycle.
 */
export const title = 'Configuration';

/** @param {import('../app.js').View} view */
export const render = async (view) => {
  const message = h('div', { 'aria-live': 'polite' });
  const sectionsBox = h('div', { id: 'config-sections' });
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
      await refresh();
    } catch (error) {
      replace(message, errorBox(error));
    }
  };
  /**
   * @param {string} sectionName
   * @param {string} option
   */
  const remove = async (sectionName, option) => {
    if (!window.confirm(`Remove ${sectionName}.${option}?`)) return;
    try {
      await call(`/config/${part(sectionName)}/${part(option)}`, { method: 'DELETE' });
      replace(message, h('div', { class: 'alert good', role: 'status' }, `Removed ${sectionName}.${option}.`));
      await refresh();
    } catch (error) {
      replace(message, errorBox(error));
    }
  };

  const refresh = async () => {
    const config = await getJson('/config');
    const names = Object.keys(config).sort();
    replace(
      sectionsBox,
      names.length === 0
        ? h('p', { class: 'muted' }, 'No option is set: every setting has its default.')
        : names.map((sectionName) =>
            section(
              sectionName,
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
                      h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
                    ),
                  ),
                  h(
                    'tbody',
                    null,
                    Object.entries(config[sectionName])
                      .sort(([a], [b]) => a.localeCompare(b))
                      .map(([option, value]) => {
                        const id = `config-${sectionName}-${option}`.replace(/[^\w-]/g, '_');
                        const input = h('input', {
                          id,
                          value: typeof value === 'string' ? value : JSON.stringify(value),
                          spellcheck: false,
                          autocomplete: 'off',
                        });
                        return h(
                          'tr',
                          null,
                          h('th', { scope: 'row' }, h('label', { for: id, class: 'mono' }, option)),
                          h('td', null, input),
                          h(
                            'td',
                            { class: 'row-actions' },
                            h(
                              'button',
                              {
                                type: 'button',
                                class: 'button small',
                                onclick: () => save(sectionName, option, input.value),
                                'aria-label': `Save ${sectionName}.${option}`,
                              },
                              'Save',
                            ),
                            h(
                              'button',
                              {
                                type: 'button',
                                class: 'button small ghost',
                                onclick: () => remove(sectionName, option),
                                'aria-label': `Remove ${sectionName}.${option}`,
                              },
                              'Remove',
                            ),
                          ),
                        );
                      }),
                  ),
                ),
              ),
              { id: `section-${sectionName}` },
            ),
          ),
    );
  };

  /** @param {SubmitEvent} event */
  const onAdd = async (event) => {
    event.preventDefault();
    await save(newSection.value.trim(), newOption.value.trim(), newValue.value);
  };

  replace(
    view.main,
    h(
      'div',
      { class: 'page-head' },
      h(
        'div',
        null,
        h('h1', null, 'Configuration'),
        h(
          'p',
          { class: 'muted' },
          'Sections and options read by the service and its daemons. Values are JSON where they parse (numbers, true, false), text otherwise.',
        ),
      ),
    ),
    message,
    h(
      'form',
      { class: 'card search-form', onsubmit: onAdd, 'aria-label': 'Set an option' },
      h('div', { class: 'field' }, h('label', { for: 'config-new-section' }, 'Section'), newSection),
      h('div', { class: 'field' }, h('label', { for: 'config-new-option' }, 'Option'), newOption),
      h('div', { class: 'field grow' }, h('label', { for: 'config-new-value' }, 'Value'), newValue),
      h('div', { class: 'field submit' }, h('button', { type: 'submit', class: 'button primary' }, 'Set')),
    ),
    sectionsBox,
  );
  await refresh();
};

/**
 * A typed value where the text reads as JSON (numbers, booleans), the text itself otherwise.
 * @param {string} text
 */
const parseValue = (text) => {
  const trimmed = text.trim();
  if (/^(true|false|-?\d+(\.\d+)?)$/i.test(trimmed)) return JSON.parse(trimmed.toLowerCase());
  return text;
};
