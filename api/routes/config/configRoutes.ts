import { loadCaller } from '../../../commands/caller.ts';
import {
  removeConfigOption,
  removeConfigSection,
  requireConfigPermission,
  setConfigOptions,
} from '../../../commands/config/configCommands.ts';
import { configValueFromText, configValueToText } from '../../../domain/config/configValue.ts';
import { AccessDenied, ConfigNotFound, ConfigurationError, ValueError } from '../../../domain/shared/errors.ts';
import { LIMITS } from '../../../domain/shared/limits.ts';
import { keyProblem } from '../../../domain/shared/names.ts';
import { configOption, configSection, configSectionsByName } from '../../../projections/config/configQueries.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import { jsonDictionary, jsonValueBody, pathOf, pathText } from '../../params.ts';
import { convertedBy } from '../../routeInput.ts';
import { z } from 'zod';
import { created, ok, type RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';

/** A section or option name: bounded, printable, never a prototype property's name (400 ValueError). */
const configKey = (what: string, key: string): string => {
  const problem = keyProblem(key, LIMITS.configKeyLength);
  if (problem) throw new ValueError(`The ${what} ${JSON.stringify(key.slice(0, 100))} ${problem}.`);
  return key;
};

/** A value as stored: text of at most Rucio's 4000 characters. */
const configText = (value: unknown): string => {
  const text = configValueToText(value);
  if (text.length > LIMITS.configValueLength)
    throw new ValueError(`A configuration value is longer than ${LIMITS.configValueLength} characters.`);
  return text;
};

/** A path variable naming a section or an option, held to `configKey`. */
const keyOf = (what: 'section' | 'option') => convertedBy(z.string(), (key) => configKey(what, key));

type ConfigOption = { section: string; option: string; value: string };

/** `{section: {option: value}}` as options; every section is checked before anything is written. */
const optionsOf = (body: Readonly<Record<string, unknown>>): ConfigOption[] => {
  const options: ConfigOption[] = [];
  for (const [section, sectionOptions] of Object.entries(body)) {
    if (sectionOptions === null || typeof sectionOptions !== 'object' || Array.isArray(sectionOptions))
      throw new ValueError('');
    configKey('section', section);
    for (const [option, value] of Object.entries(sectionOptions))
      options.push({ section, option: configKey('option', option), value: configText(value) });
  }
  return options;
};

const optionsBody = jsonValueBody(
  convertedBy(jsonDictionary({}, '`{section: {option: value}}`.'), optionsOf),
  'dictionary',
);

const typedOptions = (options: Record<string, string>) =>
  Object.fromEntries(Object.entries(options).map(([option, value]) => [option, configValueFromText(value)]));

export const registerConfigRoutes = (routes: RouteTable, services: Services): void => {
  const requireReader = async (ctx: AppContext, what: string) =>
    requireConfigPermission(await loadCaller(services.commands, ctx.state.issuer!), what);
  const set = async (ctx: AppContext, options: ConfigOption[]) => {
    await created(ctx, services, (metadata) => setConfigOptions(services.commands, { options }, metadata));
  };

  routes.get(
    '/config',
    {
      accept: JSON_ONLY,
      summary: 'The whole configuration: `{section: {option: value}}` (admins).',
      raises: [AccessDenied],
    },
    async (ctx) => {
      await requireReader(ctx, 'retrieve sections');
      const result: Record<string, Record<string, unknown>> = {};
      for await (const section of configSectionsByName(services.readModels))
        result[section.section] = typedOptions(section.options);
      sendJson(ctx, result);
    },
  );

  routes.post(
    '/config',
    { summary: 'Sets options of several sections at once.', body: optionsBody, raises: [ConfigurationError] },
    async (ctx, { body }) => {
      await set(ctx, body);
    },
  );

  routes.get(
    '/config/:section',
    {
      params: pathOf({ section: pathText() }),
      accept: JSON_ONLY,
      summary: 'The options of one section.',
      raises: [AccessDenied, ConfigNotFound],
    },
    async (ctx, { params }) => {
      await requireReader(ctx, `retrieve options and values from section ${params.section}`);
      const section = await configSection(services.readModels, params.section);
      if (!section) throw new ConfigNotFound(`No configuration found for section '${params.section}'`);
      sendJson(ctx, typedOptions(section.options));
    },
  );
  routes.delete(
    '/config/:section',
    { params: pathOf({ section: keyOf('section') }), summary: 'Removes a section.', raises: [ConfigNotFound] },
    async (ctx, { params }) => {
      await ok(ctx, services, (metadata) =>
        removeConfigSection(services.commands, { section: params.section }, metadata),
      );
    },
  );

  routes.get(
    '/config/:section/:option',
    {
      params: pathOf({ section: pathText(), option: pathText() }),
      accept: JSON_ONLY,
      summary: 'One option’s value, typed as JSON.',
      raises: [AccessDenied, ConfigNotFound],
    },
    async (ctx, { params }) => {
      const section = params.section;
      const option = params.option;
      try {
        await requireReader(ctx, `retrieve option ${option} from section ${section}`);
      } catch (error) {
        if (error instanceof AccessDenied) throw new AccessDenied(`Access to '${section}' option '${option}' denied`);
        throw error;
      }
      const value = await configOption(services.readModels, section, option);
      if (value === undefined)
        throw new ConfigNotFound(`No configuration found for section '${section}' option '${option}'`);
      sendJson(ctx, configValueFromText(value));
    },
  );
  routes.delete(
    '/config/:section/:option',
    {
      params: pathOf({ section: keyOf('section'), option: keyOf('option') }),
      summary: 'Removes an option.',
      raises: [ConfigNotFound],
    },
    async (ctx, { params }) => {
      await ok(ctx, services, (metadata) => removeConfigOption(services.commands, params, metadata));
    },
  );

  routes.put(
    '/config/:section/:option/:value',
    {
      params: pathOf({
        section: keyOf('section'),
        option: keyOf('option'),
        value: convertedBy(z.string(), configText),
      }),
      raises: [ConfigurationError],
      summary: 'Sets one option from the path.',
      body: 'none',
      success: { status: 201, type: 'application/json', description: 'The JSON string "Created".' },
    },
    async (ctx, { params }) => {
      await set(ctx, [params]);
    },
  );
};
