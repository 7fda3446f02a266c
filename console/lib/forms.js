import { call } from './api.js';
import { confirmDialog, errorBox, h, notice, replace } from './dom.js';

/** A section's result line: the last change said, or nothing. @param {string | undefined} said */
export const resultBox = (said) => h('div', { 'aria-live': 'polite' }, said ? notice('good', said) : null);

/**
 * Small forms the admin pages share: a row of labelled fields with a submit button whose result is
 * shown beside the form, and a confirmed delete button. Every control has a label and the whole
 * form works from the keyboard (Enter submits, Tab walks the fields).
 */

/**
 * A labelled field.
 * @param {string} label
 * @param {HTMLElement} control (with an id)
 * @param {{ grow?: boolean, hint?: string }} [options]
 */
export const field = (label, control, options = {}) =>
  h(
    'div',
    { class: `field${options.grow ? ' grow' : ''}` },
    h('label', { for: control.id }, label),
    control,
    options.hint ? h('small', { class: 'hint' }, options.hint) : null,
  );

/**
 * A text input.
 * @param {string} id
 * @param {import('./dom.js').Attributes} [attributes]
 */
export const textInput = (id, attributes = {}) =>
  h('input', { id, name: id, autocomplete: 'off', spellcheck: false, ...attributes });

/**
 * A form of fields in a row; `submit` does the work and returns the sentence shown on success.
 * After success the page's `after` runs (to show the change).
 * @param {{ label: string, fields: import('./dom.js').Children, submit: () => Promise<string>, after?: (said: string) => unknown, id?: string }} options
 */
export const actionForm = (options) => {
  const result = h('div', { class: 'form-result', 'aria-live': 'polite' });
  const button = h('button', { type: 'submit', class: 'button primary' }, options.label);
  const form = h(
    'form',
    {
      class: 'form row inline-form',
      ...(options.id ? { id: options.id } : {}),
      onsubmit: async (/** @type {SubmitEvent} */ event) => {
        event.preventDefault();
        button.disabled = true;
        try {
          const said = await options.submit();
          // A section that shows itself again says the result in its new self.
          if (options.after) await options.after(said);
          else replace(result, notice('good', said));
        } catch (error) {
          replace(result, errorBox(error));
        }
        button.disabled = false;
      },
    },
    options.fields,
    h('div', { class: 'field submit' }, button),
  );
  return h('div', { class: 'action-form' }, form, result);
};

/**
 * A delete button that asks first.
 * @param {{ label: string, what: string, title: string, path: string, body?: unknown, target: HTMLElement, after?: (said: string) => unknown }} options
 */
export const deleteButton = (options) =>
  h(
    'button',
    {
      type: 'button',
      class: 'button small danger',
      'aria-label': options.label,
      onclick: async () => {
        const answer = await confirmDialog({
          title: options.title,
          body: h('p', null, options.what),
          confirm: 'Delete',
          danger: true,
        });
        if (!answer) return;
        try {
          await call(options.path, { method: 'DELETE', ...(options.body !== undefined ? { body: options.body } : {}) });
          if (options.after) await options.after('Deleted.');
          else replace(options.target, notice('good', 'Deleted.'));
        } catch (error) {
          replace(options.target, errorBox(error));
        }
      },
    },
    'Delete',
  );
