import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { deterministicJobId } from '../../infra/transfer/fts3Jobs.ts';

/**
 * A stand-in for an FTS3 REST server on the loopback, answering with the shapes of fts-rest-flask
 * (controllers/jobs.py: submit, get, cancel; lib/middleware/error_as_json.py for errors) that
 * Rucio's transfertool/fts3.py reads. It records every request, so tests check what the client
 * sends, and it can be told to answer anything else for one call.
 *
 * Jobs move one step per poll: SUBMITTED, ACTIVE, then their outcome, chosen by the source URLs:
 * a source whose path contains `/fail` fails (a checksum mismatch), `/missing` fails so the next
 * source is tried, `/hold` stays ACTIVE until cancelled; any other finishes.
 *
 * As FTS does, it also runs multihop jobs (`params.multihop`: job type H, the files one after the
 * other, a failed file making the rest NOT_USED), brings tape sources online first when
 * `bring_online` is set and the file's source is TAPE (the file STAGING, with `staging_start` and
 * `staging_finished`; a file whose source is its destination is a staging-only transfer, FINISHED
 * once online), and holds a file ARCHIVING for a poll after its copy when `archive_timeout` is set.
 * With `authenticate`, a submission's `Authorization` header must pass it (FTS checks a bearer
 * token with its issuer), else 403.
 */

export type RecordedRequest = Readonly<{
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
  peerCertificate: unknown;
}>;

/**
 * An answer a test imposes: status and JSON (or raw text); `hang`: no answer at all; `lost`: the
 * request is carried out but the connection drops before the answer.
 */
export type ScriptedAnswer = Readonly<{ status: number; json?: unknown; text?: string }> | 'hang' | 'lost';

type FakeFile = {
  file_id: number;
  file_state: string;
  source_surl: string;
  dest_surl: string;
  reason: string | null;
  start_time: string | null;
  finish_time: string | null;
  staging_start: string | null;
  staging_finished: string | null;
  filesize: number;
  file_metadata: unknown;
};

type FakeJob = {
  job_id: string;
  job_state: string;
  job_type: string;
  job_metadata: unknown;
  reason: string | null;
  priority: number;
  submit_time: string;
  files: FakeFile[];
  polls: number;
  params: Record<string, unknown>;
};

const ftsTime = (): string => new Date().toISOString().slice(0, 19);

export const BASE_ID = '01874efb-4735-4595-bc9c-591aef8240c9';
export const VO = 'testvo';

export class FakeFts3Server {
  readonly requests: RecordedRequest[] = [];
  readonly jobs = new Map<string, FakeJob>();
  private readonly scripted: ((request: RecordedRequest) => ScriptedAnswer | undefined)[] = [];
  private readonly hanging = new Set<ServerResponse>();
  private server!: Server;
  url = '';
  /** Checks a submission's Authorization header (undefined when none was sent); absent: any is taken. */
  authenticate: ((authorization: string | undefined) => Promise<boolean>) | undefined;

  /** Starts on 127.0.0.1; with `tls`, over https with those server options. */
  static async start(tls?: ServerOptions): Promise<FakeFts3Server> {
    const fake = new FakeFts3Server();
    const handler = (request: IncomingMessage, response: ServerResponse) => void fake.handle(request, response);
    fake.server = tls ? createHttpsServer(tls, handler) : createHttpServer(handler);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.url = `${tls ? 'https' : 'http'}://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  /** The next request that `matches` gets `answer` instead of the fake's own. */
  answerNext(matches: (request: RecordedRequest) => boolean, answer: ScriptedAnswer): void {
    const once = (request: RecordedRequest): ScriptedAnswer | undefined => {
      if (!matches(request)) return undefined;
      this.scripted.splice(this.scripted.indexOf(once), 1);
      return answer;
    };
    this.scripted.push(once);
  }

  requestsTo(method: string, pathStart: string): RecordedRequest[] {
    return this.requests.filter((request) => request.method === method && request.path.startsWith(pathStart));
  }

  async stop(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', 'http://fts');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    const socket = request.socket as { getPeerCertificate?: () => unknown };
    const recorded: RecordedRequest = {
      method: request.method ?? '',
      path: decodeURIComponent(url.pathname),
      query: url.searchParams,
      headers: request.headers,
      body,
      peerCertificate: socket.getPeerCertificate?.() ?? null,
    };
    this.requests.push(recorded);

    let scripted: ScriptedAnswer | undefined;
    for (const script of [...this.scripted]) {
      scripted = script(recorded);
      if (scripted !== undefined) break;
    }
    if (scripted === 'hang') {
      this.hanging.add(response);
      return;
    }
    if (scripted === 'lost') {
      const writeHead = response.writeHead.bind(response);
      response.writeHead = ((...args: Parameters<ServerResponse['writeHead']>) => {
        request.socket.destroy();
        return writeHead(...args);
      }) as ServerResponse['writeHead'];
    } else if (scripted) {
      return send(response, scripted.status, scripted.json, scripted.text);
    }

    const [, first, second] = recorded.path.split('/');
    if (first === 'whoami' && recorded.method === 'GET')
      return send(response, 200, { base_id: BASE_ID, vos: [VO], user_dn: '/CN=dms', method: 'certificate' });
    if (first === 'jobs' && recorded.method === 'POST' && second === undefined) {
      if (this.authenticate && !(await this.authenticate(request.headers.authorization)))
        return sendError(response, 403, 'Forbidden', 'Authentication failed: the bearer token was refused');
      return this.submit(response, body);
    }
    if (first === 'jobs' && recorded.method === 'GET' && second)
      return this.get(response, second.split(','), recorded.query.get('files'));
    if (first === 'jobs' && recorded.method === 'DELETE' && second) return this.cancel(response, second);
    return sendError(response, 404, 'Not Found', 'The requested URL was not found on the server.');
  }

  private submit(response: ServerResponse, body: unknown): void {
    const submission = body as {
      files?: { sources?: string[]; destinations?: string[]; metadata?: unknown; filesize?: number }[];
      params?: Record<string, unknown>;
    } | null;
    const files = submission?.files;
    if (!Array.isArray(files) || files.length === 0)
      return sendError(response, 400, 'Bad Request', 'No transfers or namespace operations specified');
    if (files.some((file) => !file.sources?.length || !file.destinations?.length))
      return sendError(response, 400, 'Bad Request', 'Missing sources or destinations');
    const params = submission?.params ?? {};
    const multihop = params.multihop === true;
    if (!multihop && files.length > 1)
      return sendError(response, 400, 'Bad Request', 'Only one file per job outside multihop jobs here');
    let jobId: string = randomUUID();
    if (params.id_generator === 'deterministic' && typeof params.sid === 'string') {
      jobId = deterministicJobId(BASE_ID, VO, params.sid);
      if (this.jobs.has(jobId))
        return sendError(response, 409, 'Conflict', 'The sid provided by the user is duplicated');
    }
    const bringOnline = typeof params.bring_online === 'number' && params.bring_online > 0;
    const staged = (file: (typeof files)[number]) =>
      bringOnline && (file.metadata as { src_type?: string } | undefined)?.src_type === 'TAPE';
    const fakeFile = (file: (typeof files)[number], source: string, index: number): FakeFile => ({
      file_id: index + 1,
      file_state: staged(file) ? 'STAGING' : 'SUBMITTED',
      source_surl: source,
      dest_surl: file.destinations![0]!,
      reason: null,
      start_time: null,
      finish_time: null,
      staging_start: staged(file) ? ftsTime() : null,
      staging_finished: null,
      filesize: file.filesize ?? 0,
      file_metadata: file.metadata ?? null,
    });
    const first = files[0]!;
    const multiSources = !multihop && first.sources!.length > 1;
    this.jobs.set(jobId, {
      job_id: jobId,
      job_state: files.some(staged) ? 'STAGING' : 'SUBMITTED',
      job_type: multihop ? 'H' : multiSources ? 'R' : 'N',
      job_metadata: params.job_metadata ?? null,
      reason: null,
      priority: Number(params.priority ?? 3),
      submit_time: ftsTime(),
      params,
      polls: 0,
      files: multihop
        ? files.map((file, index) => fakeFile(file, file.sources![0]!, index))
        : first.sources!.map((source, index) => fakeFile(first, source, index)),
    });
    send(response, 200, { job_id: jobId });
  }

  /**
   * One step of a multihop, staging or archiving job: its current file (the first not final)
   * moves on: STAGING → SUBMITTED (FINISHED for a staging-only file) → ACTIVE → FINISHED, or
   * ARCHIVING first with an archive timeout, or FAILED for a `/fail` source, the rest NOT_USED.
   */
  private advanceStepwise(job: FakeJob): void {
    const current = job.files.find((file) => !['FINISHED', 'FAILED', 'CANCELED', 'NOT_USED'].includes(file.file_state));
    if (current) {
      switch (current.file_state) {
        case 'STAGING':
          current.staging_finished = ftsTime();
          current.file_state = current.source_surl === current.dest_surl ? 'FINISHED' : 'SUBMITTED';
          if (current.file_state === 'FINISHED') current.finish_time = ftsTime();
          break;
        case 'SUBMITTED':
          current.file_state = 'ACTIVE';
          current.start_time = ftsTime();
          break;
        case 'ACTIVE':
          if (current.source_surl.includes('/fail')) {
            current.file_state = 'FAILED';
            current.reason = 'TRANSFER [5] DESTINATION CHECKSUM MISMATCH Source and destination checksums do not match';
            current.finish_time = ftsTime();
            for (const rest of job.files.filter((file) => file.file_id > current.file_id)) rest.file_state = 'NOT_USED';
          } else if (typeof job.params.archive_timeout === 'number') {
            current.file_state = 'ARCHIVING';
          } else {
            current.file_state = 'FINISHED';
            current.finish_time = ftsTime();
          }
          break;
        case 'ARCHIVING':
          current.file_state = 'FINISHED';
          current.finish_time = ftsTime();
          break;
      }
    }
    const states = job.files.map((file) => file.file_state);
    if (states.every((state) => state === 'FINISHED')) job.job_state = 'FINISHED';
    else if (states.some((state) => state === 'FAILED')) {
      job.job_state = 'FAILED';
      job.reason = 'One or more files failed. Please have a look at the details for more information';
    } else if (states.includes('STAGING')) job.job_state = 'STAGING';
    else job.job_state = 'ACTIVE';
  }

  /** One step of the state machine: what FTS's daemons would have done between two polls. */
  private advance(job: FakeJob): void {
    job.polls += 1;
    if (['FINISHED', 'FAILED', 'CANCELED', 'FINISHEDDIRTY'].includes(job.job_state)) return;
    if (job.polls === 1) return;
    if (
      job.job_type === 'H' ||
      job.files.some((file) => file.staging_start !== null) ||
      typeof job.params.archive_timeout === 'number'
    )
      return this.advanceStepwise(job);
    if (job.polls === 2 || job.files.some((file) => file.source_surl.includes('/hold'))) {
      job.job_state = 'ACTIVE';
      job.files[0]!.file_state = 'ACTIVE';
      job.files[0]!.start_time ??= ftsTime();
      return;
    }
    for (const [index, file] of job.files.entries()) {
      file.start_time ??= ftsTime();
      file.finish_time = ftsTime();
      if (file.source_surl.includes('/missing')) {
        file.file_state = 'FAILED';
        file.reason = 'SOURCE [2] Result No such file or directory';
        continue;
      }
      if (file.source_surl.includes('/fail')) {
        file.file_state = 'FAILED';
        file.reason =
          'TRANSFER [5] DESTINATION CHECKSUM MISMATCH Source and destination checksums do not match 0badf00d != 1a2b3c4d';
      } else {
        file.file_state = 'FINISHED';
      }
      for (const unused of job.files.slice(index + 1)) {
        unused.file_state = 'NOT_USED';
        unused.start_time = null;
        unused.finish_time = null;
      }
      break;
    }
    const states = job.files.map((file) => file.file_state);
    job.job_state = states.includes('FINISHED')
      ? states.includes('FAILED') && job.job_type !== 'R'
        ? 'FINISHEDDIRTY'
        : 'FINISHED'
      : 'FAILED';
    if (job.job_state === 'FAILED')
      job.reason = 'One or more files failed. Please have a look at the details for more information';
  }

  private get(response: ServerResponse, jobIds: string[], fileFields: string | null): void {
    const fields = fileFields ? fileFields.split(',') : [];
    const answers = jobIds.map((jobId) => {
      const job = this.jobs.get(jobId);
      if (!job)
        return {
          job_id: jobId,
          http_status: '404 Not Found',
          http_message: `No job with the id "${jobId}" has been found`,
        };
      this.advance(job);
      const { polls: _polls, files, params: _params, ...rest } = job;
      return {
        ...rest,
        http_status: '200 Ok',
        ...(fields.length > 0
          ? {
              files: files.map((file) =>
                Object.fromEntries(
                  fields.filter((field) => field in file).map((field) => [field, file[field as keyof FakeFile]]),
                ),
              ),
            }
          : {}),
      };
    });
    if (jobIds.length === 1) {
      const only = answers[0]!;
      return only.http_status === '200 Ok'
        ? send(response, 200, only)
        : sendError(response, 404, 'Not Found', JSON.stringify(only));
    }
    send(response, answers.some((answer) => answer.http_status !== '200 Ok') ? 207 : 200, answers);
  }

  private cancel(response: ServerResponse, jobId: string): void {
    const job = this.jobs.get(jobId);
    if (!job) return sendError(response, 404, 'Not Found', `No job with the id "${jobId}" has been found`);
    if (['FINISHED', 'FAILED', 'CANCELED', 'FINISHEDDIRTY'].includes(job.job_state)) {
      response.writeHead(304);
      response.end();
      return;
    }
    job.job_state = 'CANCELED';
    job.reason = 'Job canceled by the user';
    for (const file of job.files) {
      file.file_state = 'CANCELED';
      file.reason = 'Job canceled by the user';
      file.finish_time = ftsTime();
    }
    const { polls: _polls, files: _files, params: _params, ...rest } = job;
    send(response, 200, { ...rest, http_status: '200 Ok', http_message: null });
  }
}

const send = (response: ServerResponse, status: number, json: unknown, text?: string): void => {
  const body = text ?? JSON.stringify(json);
  response.writeHead(status, { 'Content-Type': text === undefined ? 'application/json' : 'text/plain' });
  response.end(body);
};

/** fts-rest's ErrorAsJson middleware: `{"status": "<code> <name>", "message": ...}`. */
const sendError = (response: ServerResponse, status: number, name: string, message: string): void =>
  send(response, status, { status: `${status} ${name}`, message });
