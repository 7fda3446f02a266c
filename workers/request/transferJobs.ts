import { settingValue, SETTINGS, type ConfigSections } from '../../domain/config/settings.ts';
import type { SubmissionResult } from '../../commands/request/conveyorSteps.ts';
import type { ActiveRequest } from '../../domain/request/requestBatch.ts';
import { attributeFlag, isTape, isTapeOrStaging, type Topology } from '../../domain/request/topology.ts';
import { copyTokenGrants, ftsTokenGrant } from '../../domain/request/transferTokens.ts';
import { localRootOf } from '../../domain/rse/lfn2pfn.ts';
import { pickFtsServer } from '../../infra/transfer/fts3TransferTool.ts';
import type { TransferEndpoint, TransferJob, TransferTool } from '../../infra/transfer/transferTool.ts';
import { messageOf } from '../role.ts';
import type { WorkerContext } from '../workerContext.ts';

/**
 * What the submitter and the stager hand to the transfer tools: each request SUBMITTING as the
 * tool's job (Rucio's `_file_from_transfer` and `build_job_params` facts: the endpoints, the tape
 * ends, the bring-online bound, the archive timeout, the tokens), and the tools asked in bulk,
 * the copies of a multihop path that go together as one job.
 */

/** A setting's value as a number when it is one (RSE attributes are stored as text). */
const typedValue = (value: unknown): unknown =>
  typeof value === 'string' && value !== '' && !Number.isNaN(Number(value)) ? Number(value) : value;

/**
 * The request attributes a tool gets (Rucio's JSON keys), with the `mock_*` settings of the
 * destination RSE, the simulated recall delay of a tape source (`simulated_recall_ms`), and the
 * overwrite rules of a tape destination (its `overwrite` and `overwrite_when_only_on_disk`).
 */
const jobAttributes = (request: ActiveRequest, topology: Topology): Record<string, unknown> => {
  const { attributes } = request.record;
  const dest = topology.rse(request.record.destRseId);
  const source = request.sourcesInUse[0] ? topology.rse(request.sourcesInUse[0].rseId) : undefined;
  const mock = Object.entries(dest?.attributes ?? {}).filter(([key]) => key.startsWith('mock_'));
  const recall = source?.attributes.simulated_recall_ms;
  return {
    activity: attributes.activity,
    source_replica_expression: attributes.sourceReplicaExpression,
    lifetime: attributes.lifetime,
    ds_scope: attributes.dsScope,
    ds_name: attributes.dsName,
    bytes: attributes.bytes,
    md5: attributes.md5,
    adler32: attributes.adler32,
    priority: attributes.priority,
    allow_tape_source: attributes.allowTapeSource,
    ...(attributes.isIntermediateHop ? { is_intermediate_hop: true } : {}),
    ...Object.fromEntries(mock.map(([key, value]) => [key, typedValue(value)])),
    ...(recall !== undefined ? { simulated_recall_ms: typedValue(recall) } : {}),
    ...(dest && isTape(dest)
      ? {
          overwrite: attributeFlag(dest, 'overwrite'),
          overwrite_when_only_on_disk: attributeFlag(dest, 'overwrite_when_only_on_disk'),
        }
      : {}),
    ...ftsServerOf(request, topology),
  };
};

/** The FTS server of a transfer (Rucio's `_pick_fts_servers`), for the `fts3` tool: none when an end has no `fts` attribute. */
const ftsServerOf = (request: ActiveRequest, topology: Topology): { fts?: string } => {
  const source = request.sourcesInUse[0];
  const server = source
    ? pickFtsServer(
        topology.rse(source.rseId)?.attributes ?? {},
        topology.rse(request.record.destRseId)?.attributes ?? {},
      )
    : null;
  return server ? { fts: server } : {};
};

/** An end of a copy; a PFN of a posix protocol carries its prefix, which the posix tool stays inside. */
const endpoint = (
  topology: Topology,
  rse: string,
  rseId: string,
  pfn: string,
  protocolsOf = rseId,
): TransferEndpoint => {
  const root = localRootOf(topology.rse(protocolsOf)?.protocols ?? [], pfn);
  return { rse, rseId, pfn, ...(root !== undefined ? { root } : {}) };
};

/** An RSE attribute as a whole number of seconds, when it is one. */
const secondsOf = (value: unknown): number | null => {
  const parsed = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isInteger(parsed) ? parsed : null;
};

export type JobSettings = Readonly<{ bringOnline: number }>;

export const jobSettingsOf = (sections: ConfigSections): JobSettings => ({
  bringOnline: settingValue(sections, SETTINGS.conveyorBringOnline),
});

/** The tool's job for a request that is SUBMITTING. */
export const transferJob = (request: ActiveRequest, topology: Topology, settings: JobSettings): TransferJob => {
  const { record } = request;
  const source = request.sourcesInUse[0] ? topology.rse(request.sourcesInUse[0].rseId) : undefined;
  const dest = topology.rse(record.destRseId);
  const fromTape = source !== undefined && isTapeOrStaging(source);
  const toTape = dest !== undefined && isTape(dest);
  const archiveTimeout = toTape ? secondsOf(dest.attributes.archive_timeout) : null;
  const stagein = record.requestType === 'STAGEIN';
  return {
    requestId: record.id,
    file: { scope: record.scope, name: record.name, bytes: record.bytes, adler32: record.adler32, md5: record.md5 },
    sources: request.sourcesInUse.map((used) => endpoint(topology, used.rse, used.rseId, used.pfn)),
    // A STAGEIN's destination URL is its source's: that RSE's protocols hold it.
    destination: endpoint(
      topology,
      record.destRse,
      record.destRseId,
      request.destUrl ?? '',
      stagein ? (request.sourcesInUse[0]?.rseId ?? record.destRseId) : record.destRseId,
    ),
    activity: record.activity,
    priority: record.priority,
    attributes: jobAttributes(request, topology),
    requestType: stagein ? 'STAGEIN' : 'TRANSFER',
    sourceType: fromTape ? 'TAPE' : 'DISK',
    destinationType: toTape ? 'TAPE' : 'DISK',
    bringOnline: fromTape ? settings.bringOnline : null,
    ...(archiveTimeout !== null ? { archiveTimeout } : {}),
  };
};

/**
 * The job with its tokens, when its copy uses them (transferTokens.ts): asked of the trusted
 * provider (`oidc.admin_issuer`), each kept while it has `oidc.token_min_lifetime` left. A token
 * that cannot be had leaves the job to the tool's certificate, as Rucio's missing token does.
 */
const withTokens = async (
  context: WorkerContext,
  job: TransferJob,
  topology: Topology,
  sections: ConfigSections,
): Promise<TransferJob> => {
  const grants = copyTokenGrants(topology, job.sources, job.destination);
  if (!grants || !context.serviceTokens.available) return job;
  const adminIssuer = settingValue(sections, SETTINGS.oidcAdminIssuer);
  const tokens = context.serviceTokens.forIssuer(adminIssuer || null);
  if (!tokens) {
    context.logger.warn({ adminIssuer }, 'oidc.admin_issuer names no trusted provider: transfers use certificates');
    return job;
  }
  const minLifetime = settingValue(sections, SETTINGS.oidcTokenMinLifetime);
  const ask = (grant: { audience: string; scope: string }) => tokens.token(grant.audience, grant.scope, minLifetime);
  // FTS takes a bearer token over https only (Rucio), so none is asked for a plain http server.
  const server = job.attributes.fts;
  const fts = typeof server === 'string' && server.startsWith('https://') ? ftsTokenGrant(server) : null;
  const [destination, ftsToken, ...sources] = await Promise.all([
    ask(grants.destination),
    fts ? ask(fts) : Promise.resolve(null),
    ...grants.sources.map(ask),
  ]);
  if (destination === null || sources.some((token) => token === null)) {
    context.logger.warn(
      { requestId: job.requestId, reason: tokens.lastError },
      'no token for a transfer: it uses certificates',
    );
    return job;
  }
  return { ...job, tokens: { sources: sources.filter((token) => token !== null), destination, fts: ftsToken } };
};

/**
 * Hands the requests to their tools, in bulk per tool: the copies of each path in `paths` (by the
 * initial request) as one job, the others one job each. A tool that throws, or cannot run a path
 * as one job, fails the submission of its jobs.
 */
export const submitToTools = async (
  context: WorkerContext,
  requests: readonly ActiveRequest[],
  topology: Topology,
  paths: ReadonlyMap<string, readonly string[]>,
  sections: ConfigSections,
): Promise<SubmissionResult[]> => {
  const settings = jobSettingsOf(sections);
  const byId = new Map(requests.map((request) => [request.record.id, request]));
  const onPath = new Set([...paths.values()].flat());
  // Units of submission: a path's copies together, every other request alone.
  const units: ActiveRequest[][] = [
    ...[...paths.values()].map((ids) => ids.map((id) => byId.get(id)!)),
    ...requests.filter((request) => !onPath.has(request.record.id)).map((request) => [request]),
  ];
  const byTool = new Map<string, ActiveRequest[][]>();
  for (const unit of units) {
    const name = unit.at(-1)!.transfertool ?? '';
    byTool.set(name, [...(byTool.get(name) ?? []), unit]);
  }
  const results: SubmissionResult[] = [];
  const refuse = (unit: readonly ActiveRequest[], failure: string) =>
    results.push(...unit.map((request) => ({ requestId: request.record.id, failure })));
  for (const [name, batch] of byTool) {
    const tool = context.transferTools.get(name);
    if (!tool) {
      for (const unit of batch)
        refuse(unit, `Transfer tool ${name} is not available (known: ${context.transferTools.names().join(', ')})`);
      continue;
    }
    const jobs = await Promise.all(
      batch.map((unit) =>
        Promise.all(
          unit.map((request) => withTokens(context, transferJob(request, topology, settings), topology, sections)),
        ),
      ),
    );
    const singles = jobs.filter((unit) => unit.length === 1).map((unit) => unit[0]!);
    const multi = jobs.filter((unit) => unit.length > 1);
    await submitUnits(context, tool, name, singles, multi, results);
  }
  return results;
};

const submitUnits = async (
  context: WorkerContext,
  tool: TransferTool,
  name: string,
  singles: readonly TransferJob[],
  multi: readonly (readonly TransferJob[])[],
  results: SubmissionResult[],
): Promise<void> => {
  const attempt = async (jobs: readonly TransferJob[], submit: () => Promise<SubmissionResult[]>) => {
    if (jobs.length === 0) return;
    try {
      results.push(...(await submit()));
    } catch (error) {
      context.logger.warn({ err: error, transfertool: name, jobs: jobs.length }, 'submission failed');
      results.push(...jobs.map((job) => ({ requestId: job.requestId, failure: `${name}: ${messageOf(error)}` })));
    }
  };
  await attempt(singles, async () =>
    (await tool.submit(singles)).map(({ requestId, externalId, externalHost }) => ({
      requestId,
      externalId,
      externalHost,
    })),
  );
  const submitPaths = tool.submitPaths?.bind(tool);
  if (!submitPaths) {
    for (const path of multi)
      results.push(
        ...path.map((job) => ({ requestId: job.requestId, failure: `${name} cannot run a multihop path as one job` })),
      );
    return;
  }
  await attempt(multi.flat(), async () =>
    (await submitPaths(multi)).map(({ requestId, externalId, externalHost }) => ({
      requestId,
      externalId,
      externalHost,
    })),
  );
};
