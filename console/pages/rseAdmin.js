import { allLines, call, getJson, part } from '../lib/api.js';
import { badge, errorBox, fields, formatBytes, h, replace, rseLink, section, table } from '../lib/dom.js';
import { actionForm, deleteButton, field, resultBox, textInput } from '../lib/forms.js';
import { can } from '../lib/session.js';

/**
 * The sections of an RSE's page that admins can change: availability, attributes, limits,
 * protocols and distances. Each reads its data, shows it, and, for an account the API lets change
 * it, its forms and confirmed deletes; after a change it reads and shows itself again, the
 * result said inside it.
 */

/** @typedef {{ view: import('../app.js').View, rse: string }} RseContext */

/** @param {HTMLElement} target @param {RseContext} context @param {any} rse @param {string} [said] */
export const showAvailability = async (target, context, rse, said) => {
  const flag = (/** @type {boolean} */ on) => badge(on ? 'YES' : 'NO');
  const result = resultBox(said);
  const boxes = ['read', 'write', 'delete'].map((kind) =>
    h('input', {
      type: 'checkbox',
      id: `availability-${kind}`,
      name: kind,
      checked: Boolean(rse[`availability_${kind}`]),
    }),
  );
  const form = can(context.view.who, 'updateRse')
    ? actionForm({
        label: 'Save availability',
        fields: h(
          'fieldset',
          { class: 'field radios' },
          h('legend', null, 'Open for'),
          boxes.map((box) => h('label', { for: box.id, class: 'checkbox' }, box, ` ${box.name}`)),
        ),
        submit: async () => {
          const body = Object.fromEntries(boxes.map((box) => [`availability_${box.name}`, box.checked]));
          await call(`/rses/${part(context.rse)}`, { method: 'PUT', body });
          return `${context.rse} is open for ${
            boxes
              .filter((box) => box.checked)
              .map((box) => box.name)
              .join(', ') || 'nothing'
          }.`;
        },
        after: async (/** @type {string} */ message) =>
          showAvailability(target, context, await getJson(`/rses/${part(context.rse)}`), message),
      })
    : null;
  replace(
    target,
    section('Availability', [
      fields([
        ['Read', flag(rse.availability_read)],
        ['Write', flag(rse.availability_write)],
        ['Delete', flag(rse.availability_delete)],
      ]),
      form,
      result,
    ]),
  );
};

/** @param {HTMLElement} target @param {RseContext} context @param {string} [said] */
export const showAttributes = async (target, context, said) => {
  const path = part(context.rse);
  const attributes = await getJson(`/rses/${path}/attr/`).catch(() => ({}));
  const result = resultBox(said);
  const again = (/** @type {string} */ message) => showAttributes(target, context, message);
  const mayDelete = can(context.view.who, 'deleteRseAttribute');
  const rows = Object.entries(attributes)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => [
      h('code', null, key),
      h('code', null, JSON.stringify(value)),
      mayDelete && key !== context.rse
        ? deleteButton({
            label: `Delete attribute ${key}`,
            title: `Delete the attribute ${key}?`,
            what: `Expressions that name ${key} stop selecting ${context.rse}.`,
            path: `/rses/${path}/attr/${part(key)}`,
            target: result,
            after: again,
          })
        : '',
    ]);
  const key = textInput('attribute-key', { required: true, placeholder: 'tier' });
  const value = textInput('attribute-value', { required: true, placeholder: '1, true, CERN' });
  replace(
    target,
    section('Attributes', [
      table(['Key', 'Value', ''], rows, { empty: 'No attributes.', caption: 'Attributes' }),
      can(context.view.who, 'addRseAttribute')
        ? actionForm({
            label: 'Set attribute',
            id: 'attribute-form',
            fields: [field('Key', key), field('Value', value, { grow: true })],
            submit: async () => {
              const text = value.value.trim();
              // Numbers and booleans as such, as the API and RSE expressions read them.
              const typed = /^(true|false)$/i.test(text)
                ? text.toLowerCase() === 'true'
                : /^-?\d+(\.\d+)?$/.test(text)
                  ? Number(text)
                  : text;
              await call(`/rses/${path}/attr/${part(key.value.trim())}`, { method: 'POST', body: { value: typed } });
              return `Attribute ${key.value.trim()} set.`;
            },
            after: again,
          })
        : null,
      result,
    ]),
  );
};

/** @param {HTMLElement} target @param {RseContext} context @param {string} [said] */
export const showLimits = async (target, context, said) => {
  const path = part(context.rse);
  const limits = await getJson(`/rses/${path}/limits`).catch(() => ({}));
  const result = resultBox(said);
  const again = (/** @type {string} */ message) => showLimits(target, context, message);
  const may = can(context.view.who, 'setRseLimits');
  const name = h(
    'select',
    { id: 'limit-name', name: 'name' },
    ['MinFreeSpace', 'MaxBeingDeletedFiles'].map((option) => h('option', { value: option }, option)),
  );
  const value = textInput('limit-value', { type: 'number', min: '0', required: true });
  replace(
    target,
    section('Limits', [
      table(
        ['Limit', 'Value', ''],
        Object.entries(limits).map(([key, limit]) => [
          key,
          typeof limit === 'number' && key.toLowerCase().includes('space') ? formatBytes(limit) : String(limit),
          may
            ? deleteButton({
                label: `Delete limit ${key}`,
                title: `Delete the limit ${key}?`,
                what: 'The reaper and the judge no longer take it into account.',
                path: `/rses/${path}/limits`,
                body: { name: key },
                target: result,
                after: again,
              })
            : '',
        ]),
        { empty: 'No limits set (MinFreeSpace, MaxBeingDeletedFiles, …).', caption: 'Limits' },
      ),
      may
        ? actionForm({
            label: 'Set limit',
            fields: [field('Limit', name), field('Value (bytes or files)', value)],
            submit: async () => {
              await call(`/rses/${path}/limits`, {
                method: 'PUT',
                body: { name: name.value, value: Number(value.value) },
              });
              return `${name.value} set.`;
            },
            after: again,
          })
        : null,
      result,
    ]),
  );
};

/** @param {Record<string, number | null> | undefined} wan */
const priorities = (wan) => {
  if (!wan) return '–';
  const show = (/** @type {number | null | undefined} */ value) => (value ? String(value) : '–');
  return `${show(wan.read)} / ${show(wan.write)} / ${show(wan.third_party_copy_write ?? wan.third_party_copy)}`;
};

/** @param {HTMLElement} target @param {RseContext} context @param {string} [said] */
export const showProtocols = async (target, context, said) => {
  const path = part(context.rse);
  const rse = await getJson(`/rses/${path}`);
  const result = resultBox(said);
  const again = (/** @type {string} */ message) => showProtocols(target, context, message);
  const mayDelete = can(context.view.who, 'deleteProtocol');
  const scheme = textInput('protocol-scheme', { required: true, placeholder: 'davs, root, file' });
  const hostname = textInput('protocol-hostname', { required: true, placeholder: 'storage.example.org' });
  const port = textInput('protocol-port', { type: 'number', min: '0', max: '65535', required: true, value: '443' });
  const prefix = textInput('protocol-prefix', { required: true, placeholder: '/data/rucio' });
  const impl = textInput('protocol-impl', { required: true, value: 'rucio.rse.protocols.gfal.Default' });
  replace(
    target,
    section('Protocols', [
      table(
        ['Scheme', 'Host', 'Port', 'Prefix', 'Implementation', 'WAN read / write / TPC', ''],
        (rse.protocols ?? []).map((/** @type {any} */ protocol) => [
          h('code', null, protocol.scheme),
          protocol.hostname,
          String(protocol.port),
          h('code', { class: 'break' }, protocol.prefix),
          h('code', { class: 'small' }, protocol.impl),
          priorities(protocol.domains?.wan),
          mayDelete
            ? deleteButton({
                label: `Delete protocol ${protocol.scheme} on ${protocol.hostname}`,
                title: `Delete the ${protocol.scheme} protocol on ${protocol.hostname}?`,
                what: 'Transfers and downloads stop using it.',
                path: `/rses/${path}/protocols/${part(protocol.scheme)}/${part(protocol.hostname)}/${protocol.port}`,
                target: result,
                after: again,
              })
            : '',
        ]),
        { empty: 'No protocol: nothing can be read or written here.', caption: 'Protocols' },
      ),
      can(context.view.who, 'addProtocol')
        ? h(
            'details',
            { class: 'add-details' },
            h('summary', null, 'Add a protocol'),
            actionForm({
              label: 'Add protocol',
              fields: [
                field('Scheme', scheme),
                field('Host name', hostname, { grow: true }),
                field('Port', port),
                field('Prefix', prefix, { grow: true }),
                field('Implementation', impl, { grow: true }),
              ],
              submit: async () => {
                const priority = { read: 1, write: 1, delete: 1 };
                await call(`/rses/${path}/protocols/${part(scheme.value.trim())}`, {
                  method: 'POST',
                  body: {
                    hostname: hostname.value.trim(),
                    port: Number(port.value),
                    prefix: prefix.value.trim(),
                    impl: impl.value.trim(),
                    domains: {
                      lan: priority,
                      wan: { ...priority, third_party_copy_read: 1, third_party_copy_write: 1 },
                    },
                  },
                });
                return `Protocol ${scheme.value.trim()} added, first in every priority.`;
              },
              after: again,
            }),
          )
        : null,
      result,
    ]),
  );
};

/** @param {HTMLElement} target @param {RseContext} context @param {string} [said] */
export const showDistances = async (target, context, said) => {
  const path = part(context.rse);
  const result = resultBox(said);
  const again = (/** @type {string} */ message) => showDistances(target, context, message);
  let distances;
  try {
    distances = await getJson(`/console/rses/${path}/distances`);
  } catch (error) {
    replace(target, section('Distances', errorBox(error)));
    return;
  }
  const mayDelete = can(context.view.who, 'deleteDistance');
  const others = can(context.view.who, 'setDistance') ? await allLines('/rses/', 2000).catch(() => []) : [];
  const destination = h(
    'select',
    { id: 'distance-destination', name: 'destination', required: true },
    others
      .filter((/** @type {any} */ other) => other.rse !== context.rse)
      .map((/** @type {any} */ other) => h('option', { value: other.rse }, other.rse)),
  );
  const distance = textInput('distance-value', { type: 'number', min: '0', required: true, value: '1' });
  replace(
    target,
    section('Distances from here', [
      h(
        'p',
        { class: 'muted small' },
        'The conveyor copies from the nearest source: the smaller the distance, the sooner it is chosen.',
      ),
      table(
        ['To', 'Distance', ''],
        distances.map((/** @type {any} */ row) => [
          rseLink(row.dest_rse),
          row.distance === null ? '–' : String(row.distance),
          mayDelete
            ? deleteButton({
                label: `Delete distance to ${row.dest_rse}`,
                title: `Delete the distance to ${row.dest_rse}?`,
                what: `${context.rse} is no longer a source for copies to ${row.dest_rse}.`,
                path: `/rses/${path}/distances/${part(row.dest_rse)}`,
                target: result,
                after: again,
              })
            : '',
        ]),
        { empty: 'No distance: no copy is made from here.', numeric: [1], caption: 'Distances from the RSE' },
      ),
      others.length > 1
        ? actionForm({
            label: 'Set distance',
            fields: [field('To', destination), field('Distance', distance)],
            submit: async () => {
              const known = distances.some((/** @type {any} */ row) => row.dest_rse === destination.value);
              await call(`/rses/${path}/distances/${part(destination.value)}`, {
                method: known ? 'PUT' : 'POST',
                body: { distance: Number(distance.value) },
              });
              return `Distance to ${destination.value} set to ${distance.value}.`;
            },
            after: again,
          })
        : null,
      result,
    ]),
  );
};
