import { createHash } from 'node:crypto';
import { z } from 'zod';
import { bareReport, type JobReport, type JobState, type TransferEndpoint, type TransferJob } from './transferTool.ts';
import { TransferToolWrongAnswer } from './transferToolErrors.ts';
import { isRecord } from '../typeGuards.ts';

/**
 * What the `fts3` tool sends to FTS3 and how it reads the answers, as pure functions. The
 * submission is the JSON Rucio 39 builds (transfertool/fts3.py: `build_job_params` and
 * `_file_from_transfer`) for a transfer or a multihop path, from disk or tape, to disk or tape,
 * with certificates or tokens; the reading follows its `FTS3ApiTransferStatusReport` and
 * `__bulk_query_responses`.
 */

export type SubmissionSettings = Readonly<{
  /** `verify_checksum`: both ends (default), `source`, `target` or `none`. */
  verifyChecksum: 'both' | 'source' | 'target' | 'none';
  /** `selection_strategy` among several sources: Rucio's default `orderly` tries them in the order given. */
  sourceStrategy: string;
  /** `copy_pin_lifetime` when the job's attributes have no `lifetime` (Rucio's default 172800 s). */
  defaultLifetimeSeconds: number;
  /** Ask FTS to derive the job id from the request id (`id_generator: deterministic`, `sid`). */
  deterministicIds: boolean;
}>;

/**
 * `ADLER32:<hex>` (Rucio's preferred checksum), else `MD5:<hex>`, else null: the names in upper
 * case as Rucio writes them (`'%s:%s' % (checksum_name.upper(), value)`).
 */
export const ftsChecksumOf = (
  file: TransferJob['file'],
  verifyChecksum: SubmissionSettings['verifyChecksum'],
): string | null => {
  if (verifyChecksum === 'none') return null;
  if (file.adler32) return `ADLER32:${file.adler32}`;
  if (file.md5) return `MD5:${file.md5}`;
  return null;
};

/** One file of a job: a copy, as Rucio's `_file_from_transfer` describes it. */
const ftsFileOf = (job: TransferJob, settings: SubmissionSettings): Record<string, unknown> => {
  const firstSource = job.sources[0];
  const sourceType = job.sourceType ?? 'DISK';
  const destinationType = job.destinationType ?? 'DISK';
  return {
    sources: job.sources.map((source) => source.pfn),
    destinations: [job.destination.pfn],
    metadata: {
      request_id: job.requestId,
      scope: job.file.scope,
      name: job.file.name,
      activity: job.activity,
      request_type: job.requestType ?? 'TRANSFER',
      src_type: sourceType,
      dst_type: destinationType,
      src_rse: firstSource?.rse ?? null,
      dst_rse: job.destination.rse,
      src_rse_id: firstSource?.rseId ?? null,
      dest_rse_id: job.destination.rseId,
      filesize: job.file.bytes,
      md5: job.file.md5,
      adler32: job.file.adler32,
      // Rucio's single VO.
      ...(destinationType === 'TAPE' ? { vo: 'def' } : {}),
    },
    filesize: job.file.bytes,
    checksum: ftsChecksumOf(job.file, settings.verifyChecksum),
    selection_strategy: settings.sourceStrategy,
    activity: job.activity,
    ...(job.tokens ? { source_tokens: [...job.tokens.sources], destination_tokens: [job.tokens.destination] } : {}),
    ...(sourceType === 'TAPE' ? { staging_metadata: { default: { activity: job.activity } } } : {}),
  };
};

const overwriteOf = (job: TransferJob): boolean => job.attributes.overwrite !== false;

/**
 * The body of `POST /jobs` for one copy, or for the copies of a multihop path run as one job, as
 * Rucio's `build_job_params` and `_file_from_transfer` make it: the files in path order, the
 * parameters from the last copy (the request that started the path) but `bring_online` from the
 * first (a tape source is only ever the path's first), `multihop` for a path, `archive_timeout`
 * with `dst_file_report` for a tape destination that has one, and the tokens of the endpoints
 * when the copies use tokens. Overwriting follows the job's attributes (`overwrite`,
 * `overwrite_when_only_on_disk`, which the conveyor sets from a tape destination's attributes); a
 * path overwrites its intermediate copies only (`overwrite_hop`) when its destination refuses it.
 * Not sent, for lack of facts the port does not carry: `account`, space tokens, scitags and tape
 * metadata plugins.
 */
export const ftsPathSubmission = (
  path: readonly TransferJob[],
  settings: SubmissionSettings,
): Record<string, unknown> => {
  const first = path[0]!;
  const last = path[path.length - 1]!;
  const attributes = last.attributes;
  const lifetime =
    'lifetime' in attributes
      ? typeof attributes.lifetime === 'number'
        ? attributes.lifetime
        : null
      : settings.defaultLifetimeSeconds;
  const overwriteWhenOnlyOnDisk = last.destinationType === 'TAPE' && attributes.overwrite_when_only_on_disk === true;
  const multihop = path.length > 1;
  const params: Record<string, unknown> = {
    verify_checksum: settings.verifyChecksum,
    copy_pin_lifetime: lifetime,
    bring_online: (first.sourceType ?? 'DISK') === 'TAPE' ? (first.bringOnline ?? null) : null,
    job_metadata: {
      issuer: 'rucio',
      multi_sources: !multihop && last.sources.length > 1,
      overwrite_when_only_on_disk: overwriteWhenOnlyOnDisk,
      ...(multihop ? { multihop: true } : {}),
    },
    overwrite: overwriteWhenOnlyOnDisk ? false : overwriteOf(last),
    overwrite_when_only_on_disk: overwriteWhenOnlyOnDisk,
    priority: last.priority,
    s3alternate: true,
    ...(multihop ? { multihop: true } : {}),
    ...(last.destinationType === 'TAPE' && typeof last.archiveTimeout === 'number'
      ? { archive_timeout: last.archiveTimeout, dst_file_report: true }
      : {}),
    ...(settings.deterministicIds ? { id_generator: 'deterministic', sid: first.requestId } : {}),
  };
  if (multihop) {
    // FTS-1749: a path may overwrite what its intermediate copies find even where its destination may not.
    const overwriteHop = path.slice(0, -1).every(overwriteOf);
    params.overwrite = overwriteHop && params.overwrite === true;
    if (params.overwrite === false && overwriteHop) params.overwrite_hop = true;
  }
  return { files: path.map((job) => ftsFileOf(job, settings)), params };
};

/** The body of `POST /jobs` for one transfer (a path of one copy). */
export const ftsSubmission = (job: TransferJob, settings: SubmissionSettings): Record<string, unknown> =>
  ftsPathSubmission([job], settings);

/** A UUID version 5 (SHA-1 of namespace and name), as Python's `uuid.uuid5`. */
export const uuid5 = (namespace: string, name: string): string => {
  const namespaceBytes = Buffer.from(namespace.replaceAll('-', ''), 'hex');
  if (namespaceBytes.length !== 16) throw new Error(`not a UUID: ${namespace}`);
  const hash = createHash('sha1').update(namespaceBytes).update(name, 'utf8').digest().subarray(0, 16);
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** The id FTS gives a job submitted with `sid` (Rucio's `__get_deterministic_id`): uuid5(uuid5(base_id, vo), sid). */
export const deterministicJobId = (baseId: string, vo: string, sid: string): string => uuid5(uuid5(baseId, vo), sid);

/** The file fields asked for when polling (Rucio's `bulk_query`, plus `filesize` for the bytes moved). */
export const POLLED_FILE_FIELDS =
  'file_state,dest_surl,finish_time,start_time,staging_start,staging_finished,reason,source_surl,file_metadata,filesize';

const text = z.string().nullish();
/** Metadata come back as submitted (an object), or as text from older servers. */
const metadata = z.union([z.record(z.string(), z.unknown()), z.string()]).nullish();

const fileAnswer = z.object({
  file_state: z.string(),
  reason: text,
  source_surl: text,
  dest_surl: text,
  start_time: text,
  finish_time: text,
  staging_start: text,
  staging_finished: text,
  filesize: z.number().nullish(),
  file_metadata: metadata,
});

const jobAnswer = z.object({
  job_id: z.string(),
  job_type: z.string().optional(),
  http_status: z.string().optional(),
  http_message: text,
  job_state: z.string().optional(),
  job_metadata: metadata,
  reason: text,
  files: z.array(fileAnswer).optional(),
});

export type FtsJobAnswer = z.infer<typeof jobAnswer>;
type FtsFileAnswer = z.infer<typeof fileAnswer>;

/** The jobs of a `GET /jobs/<ids>` answer: one object for one id, a list for several. */
export const jobAnswersOf = (body: unknown, what: string): FtsJobAnswer[] => {
  const parsed = z.array(jobAnswer).safeParse(Array.isArray(body) ? body : [body]);
  if (!parsed.success)
    throw new TransferToolWrongAnswer(`${what}: not FTS job answers: ${parsed.error.message.slice(0, 300)}`);
  return parsed.data;
};

const FINAL_JOB_STATES: ReadonlySet<string> = new Set(['FAILED', 'CANCELED', 'FINISHED', 'FINISHEDDIRTY']);

/** FTS's messages for a destination that exists when overwriting is off (FTS >= 3.12.12, and before). */
const FILE_EXISTS_MESSAGES = [
  'Destination file exists and is on tape',
  'Destination file exists and overwrite is not enabled',
];

const objectOf = (value: unknown): Record<string, unknown> => {
  if (typeof value === 'string') {
    try {
      return objectOf(JSON.parse(value));
    } catch {
      return {};
    }
  }
  return isRecord(value) ? value : {};
};

const isTrue = (value: unknown): boolean => value === true || String(value).toLowerCase() === 'true';

/**
 * Rucio's `_is_recoverable_fts_overwrite_error`: FTS refused to overwrite, but the file it found
 * (`dst_file`, reported with `dst_file_report`) has the expected size and checksum, on disk or
 * already on tape: the copy is there, so the transfer is DONE.
 */
const destinationAlreadyCorrect = (reason: string | null, fileMetadata: Record<string, unknown>): boolean => {
  if (!reason || !FILE_EXISTS_MESSAGES.some((message) => reason.includes(message))) return false;
  const destination = objectOf(fileMetadata.dst_file);
  const checksumType = String(destination.checksum_type ?? '').toLowerCase();
  const sizeMatches =
    typeof destination.file_size === 'number' &&
    destination.file_size !== 0 &&
    destination.file_size === fileMetadata.filesize;
  const checksumMatches =
    (checksumType === 'adler32' && destination.checksum_value === fileMetadata.adler32) ||
    (checksumType === 'md5' && destination.checksum_value === fileMetadata.md5);
  return sizeMatches && checksumMatches && (fileMetadata.dst_type === 'DISK' || isTrue(destination.file_on_tape));
};

/** FTS times are UTC without a zone (`2024-05-01T10:00:00`). */
const isoTime = (time: string | null | undefined): string | null => {
  if (!time) return null;
  const parsed = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(time) ? time : `${time}Z`);
  return Number.isNaN(parsed) ? null : new Date(parsed).toISOString();
};

const noNews = (externalId: string): JobReport => bareReport(externalId, 'SUBMITTED');

/** What a job answer says of the transfer; `sources` (the job's, when this process submitted it) name the source FTS read. */
export const reportOfFtsJob = (
  externalId: string,
  answer: FtsJobAnswer,
  sources: readonly TransferEndpoint[] = [],
): JobReport => {
  const httpStatus = answer.http_status ?? '200 Ok';
  if (httpStatus.startsWith('404')) {
    return { ...noNews(externalId), state: 'LOST', reason: answer.http_message ?? `FTS job ${externalId} not found` };
  }
  // Any other error (403: not ours to read) tells nothing of the transfer: as Rucio, ask again later.
  if (!httpStatus.startsWith('200')) return noNews(externalId);
  if (answer.job_type === 'H' || isTrue(objectOf(answer.job_metadata).multihop))
    return multihopReport(externalId, answer);

  const jobState = answer.job_state ?? '';
  const jobFinal = FINAL_JOB_STATES.has(jobState);
  const multiSources = isTrue(objectOf(answer.job_metadata).multi_sources);
  // A job with several sources has one file per source: wait for the job to end, then read the
  // file that finished, or else the last one tried.
  if (multiSources && !jobFinal) return noNews(externalId);
  const files = answer.files ?? [];
  const tried = multiSources ? files.filter((file) => file.file_state !== 'NOT_USED') : files;
  const file: FtsFileAnswer | undefined =
    tried.find((candidate) => candidate.file_state === 'FINISHED') ?? tried.at(-1) ?? files.at(-1);

  if (!file) {
    if (!jobFinal) return noNews(externalId);
    const state: JobState = jobState === 'FINISHED' ? 'DONE' : 'FAILED';
    return { ...noNews(externalId), state, reason: state === 'DONE' ? null : (answer.reason ?? `FTS job ${jobState}`) };
  }
  return fileReport(externalId, answer, file, multiSources, sources);
};

/** What one file of a job says: its copy's outcome, as Rucio's `FTS3ApiTransferStatusReport` reads it. */
const fileReport = (
  externalId: string,
  answer: FtsJobAnswer,
  file: FtsFileAnswer,
  multiSources: boolean,
  sources: readonly TransferEndpoint[] = [],
): JobReport => {
  const jobState = answer.job_state ?? '';
  const jobFinal = FINAL_JOB_STATES.has(jobState);
  const multihop = answer.job_type === 'H' || isTrue(objectOf(answer.job_metadata).multihop);
  const fileMetadata = objectOf(file.file_metadata);
  let reason = file.reason || answer.reason || null;
  let state: JobState = 'SUBMITTED';
  switch (file.file_state) {
    case 'FINISHED':
      state = 'DONE';
      break;
    case 'FAILED':
      if (jobFinal || !multiSources) state = destinationAlreadyCorrect(reason, fileMetadata) ? 'DONE' : 'FAILED';
      break;
    case 'CANCELED':
      if (jobFinal) state = 'FAILED';
      break;
    case 'NOT_USED':
      if (jobFinal) state = jobState === 'FINISHED' ? 'DONE' : 'FAILED';
      // A copy of a failed path that never ran.
      if (state === 'FAILED' && !file.reason && multihop) reason = 'Unused hop in multi-hop';
      break;
  }
  if (state === 'SUBMITTED') return noNews(externalId);

  const sourceUrl = file.source_surl ?? null;
  const source =
    sources.find((candidate) => candidate.pfn === sourceUrl) ??
    (sourceUrl !== null
      ? { rse: String(fileMetadata.src_rse ?? ''), rseId: String(fileMetadata.src_rse_id ?? ''), pfn: sourceUrl }
      : null);
  const bytes = file.filesize ?? (typeof fileMetadata.filesize === 'number' ? fileMetadata.filesize : null);
  const failure = reason ?? `FTS file ${file.file_state}`;
  return {
    externalId,
    state,
    // Rucio marks failures read from tape.
    reason: state === 'DONE' ? null : fileMetadata.src_type === 'TAPE' ? `[TAPE SOURCE] ${failure}` : failure,
    source,
    bytesTransferred: state === 'DONE' ? bytes : null,
    startedAt: isoTime(file.start_time),
    finishedAt: isoTime(file.finish_time),
    ...(file.staging_start || file.staging_finished
      ? { stagingStartedAt: isoTime(file.staging_start), stagingFinishedAt: isoTime(file.staging_finished) }
      : {}),
  };
};

/**
 * A multihop job: one file per copy, each naming its request in its metadata. Each copy is
 * reported on its own (`byRequest`); the job's own report is its last copy's, the request that
 * started the path.
 */
const multihopReport = (externalId: string, answer: FtsJobAnswer): JobReport => {
  const byRequest = new Map<string, JobReport>();
  let last: JobReport = noNews(externalId);
  for (const file of answer.files ?? []) {
    const report = fileReport(externalId, answer, file, false);
    const requestId = objectOf(file.file_metadata).request_id;
    if (typeof requestId === 'string') byRequest.set(requestId, report);
    last = report;
  }
  return { ...last, byRequest };
};
