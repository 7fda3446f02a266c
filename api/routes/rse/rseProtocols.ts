import { addRseProtocol, removeRseProtocols, updateRseProtocols } from '../../../commands/rse/rseCommands.ts';
import { lfnsToPfns, type Lfn } from '../../../domain/rse/lfn2pfn.ts';
import { protocolChangesFromRequest, protocolFromRequest } from '../../../domain/rse/protocolInput.ts';
import {
  Duplicate,
  InvalidObject,
  InvalidPath,
  ReplicaNotFound,
  RSENotFound,
  RSEOperationNotSupported,
  RSEProtocolDomainNotSupported,
  RSEProtocolNotSupported,
  RSEProtocolPriorityError,
  ValueError,
} from '../../../domain/shared/errors.ts';
import { findReplica } from '../../../projections/replica/replicaQueries.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import { jsonObjectBodyOf, pathOf, pathText, queryOf, queryText } from '../../params.ts';
import { convertedBy } from '../../routeInput.ts';
import { z } from 'zod';
import { created, ok, type HandlerFor, type RouteTable } from '../../route.ts';
import { NEW_PROTOCOL, PROTOCOL_CHANGE_FIELDS, PROTOCOL_CHANGES } from './rseProtocolParams.ts';
import { activeRse, defaultLfn2pfnAlgorithm, lfn2pfnAlgorithmOf, rseSettings, sortedProtocols } from './rseViews.ts';
import type { Services } from '../../services.ts';

/** The path of a protocol update or deletion: its scheme, optionally narrowed by hostname and port. */
const selectorPath = pathOf({
  rse: pathText(),
  scheme: pathText(),
  hostname: pathText().optional(),
  port: pathText().optional(),
});

/**
 * The optional `<hostname>/<port>` path segments that narrow a protocol update or deletion. The
 * port is read after the body, as Rucio reads it.
 */
const protocolSelector = ({ rse, scheme, hostname, port }: z.output<typeof selectorPath>) => {
  if (port !== undefined && !/^[+-]?\d+$/.test(port.trim()))
    throw new ValueError(`invalid literal for int() with base 10: '${port}'`);
  return {
    rse,
    scheme,
    ...(hostname !== undefined ? { hostname } : {}),
    ...(port !== undefined ? { port: Number.parseInt(port, 10) } : {}),
  };
};

/** `scope:name` texts of `?lfn=`; one without a colon is InvalidPath. */
const lfnsOf = (texts: readonly string[]): Lfn[] => {
  const invalid = texts.filter((text) => !text.includes(':'));
  if (invalid.length > 0) throw new InvalidPath(`LFN(s) in invalid format: ${invalid.join(', ')}`);
  return texts.map((text) => {
    const colon = text.indexOf(':');
    return { scope: text.slice(0, colon), name: text.slice(colon + 1) };
  });
};

const LFNS2PFNS = queryOf({
  lfn: convertedBy(
    z.preprocess((value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]), z.array(z.string())),
    lfnsOf,
  ).describe('`scope:name`, repeated for several.'),
  scheme: queryText().describe('A protocol scheme.'),
  domain: queryText().describe('wan (default) or lan.'),
  operation: queryText().describe('write (default), read, delete, third_party_copy_read, ...'),
});

/** What a protocol body can be refused with, besides a body that is not a JSON object. */
const PROTOCOL_REFUSALS = [
  InvalidObject,
  RSEProtocolDomainNotSupported,
  RSEOperationNotSupported,
  RSEProtocolPriorityError,
] as const;

/** Protocols of RSEs and PFNs built from them (rest-api-reference.md §1.21). */
export const registerRseProtocolRoutes = (routes: RouteTable, services: Services): void => {
  const updating = {
    params: selectorPath,
    summary: 'Changes the protocols of an RSE with this scheme (and hostname and port, when given).',
    body: jsonObjectBodyOf(PROTOCOL_CHANGES, {
      description: 'The keys to change; `scheme`, `hostname` and `port` identify the protocol and cannot change.',
      documentedBy: PROTOCOL_CHANGE_FIELDS,
    }),
    raises: [RSENotFound, RSEProtocolNotSupported, ...PROTOCOL_REFUSALS],
  };
  const removing = {
    params: selectorPath,
    summary: 'Removes the protocols of an RSE with this scheme (and hostname and port, when given).',
    raises: [RSENotFound, RSEProtocolNotSupported],
  };
  const update: HandlerFor<typeof updating> = async (ctx, { params, body }) => {
    const changes = protocolChangesFromRequest(body, params.scheme);
    await ok(ctx, services, (metadata) =>
      updateRseProtocols(services.commands, { ...protocolSelector(params), changes }, metadata),
    );
  };
  const remove: HandlerFor<typeof removing> = async (ctx, { params }) => {
    await ok(ctx, services, (metadata) => removeRseProtocols(services.commands, protocolSelector(params), metadata));
  };
  for (const path of ['/rses/:rse/protocols/:scheme/:hostname/:port', '/rses/:rse/protocols/:scheme/:hostname']) {
    routes.put(path, updating, update);
    routes.delete(path, removing, remove);
  }

  /** Rucio answers the RSE's whole settings here, whatever the scheme. */
  routes.get(
    '/rses/:rse/protocols/:scheme',
    {
      params: pathOf({ rse: pathText(), scheme: pathText() }),
      accept: JSON_ONLY,
      summary: 'The RSE’s settings with every protocol, whatever the scheme (as Rucio answers).',
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      const document = await activeRse(services, params.rse);
      sendJson(ctx, rseSettings(document, await defaultLfn2pfnAlgorithm(services)));
    },
  );
  routes.post(
    '/rses/:rse/protocols/:scheme',
    {
      params: pathOf({ rse: pathText(), scheme: pathText() }),
      summary: 'Adds a protocol to an RSE.',
      body: jsonObjectBodyOf(NEW_PROTOCOL, { description: 'The protocol; `impl` is required.' }),
      raises: [RSENotFound, Duplicate, ...PROTOCOL_REFUSALS],
    },
    async (ctx, { params, body }) => {
      const protocol = protocolFromRequest(params.scheme, body);
      await created(ctx, services, (metadata) =>
        addRseProtocol(services.commands, { rse: params.rse, protocol }, metadata),
      );
    },
  );
  routes.put('/rses/:rse/protocols/:scheme', updating, update);
  routes.delete('/rses/:rse/protocols/:scheme', removing, remove);

  routes.get(
    '/rses/:rse/protocols',
    {
      params: pathOf({ rse: pathText() }),
      accept: JSON_ONLY,
      summary: 'The protocols of an RSE, by priority.',
      raises: [RSENotFound, RSEProtocolNotSupported],
    },
    async (ctx, { params }) => {
      const protocols = sortedProtocols(await activeRse(services, params.rse));
      if (protocols.length === 0) throw new RSEProtocolNotSupported('No protocols found for this RSE');
      sendJson(ctx, protocols);
    },
  );

  /**
   * `?lfn=scope:name` (repeatable), `scheme`, `domain` (default wan), `operation` (default
   * write). Non-deterministic RSEs only know the paths their replicas were registered with
   * (read from the replica read model); without a replica there is no PFN to give, as in Rucio.
   */
  routes.get(
    '/rses/:rse/lfns2pfns',
    {
      params: pathOf({ rse: pathText() }),
      accept: JSON_ONLY,
      summary: 'The PFNs of LFNs on an RSE.',
      query: LFNS2PFNS,
      raises: [RSENotFound, InvalidPath, ReplicaNotFound],
    },
    async (ctx, { params, query }) => {
      const lfns = query.lfn;
      const document = await activeRse(services, params.rse);
      const settings = {
        deterministic: document.properties.deterministic,
        lfn2pfnAlgorithm: lfn2pfnAlgorithmOf(document, await defaultLfn2pfnAlgorithm(services)),
        protocols: document.protocols,
      };
      const choice = {
        operation: query.operation ?? 'write',
        domain: query.domain ?? 'wan',
        scheme: query.scheme,
      };
      const storedPaths = new Map<string, string>();
      if (!settings.deterministic) {
        for (const { scope, name } of lfns) {
          const path = (await findReplica(services.readModels, scope, name, document.id))?.path;
          if (path) storedPaths.set(`${scope}:${name}`, path);
        }
      }
      const pfns = lfnsToPfns(settings, lfns, choice, storedPaths);
      if (Object.keys(pfns).length === 0) throw new ReplicaNotFound('No replicas found');
      sendJson(ctx, pfns);
    },
  );
};
