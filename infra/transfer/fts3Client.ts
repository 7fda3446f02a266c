import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { TransferToolTimeout, TransferToolUnavailable, TransferToolWrongAnswer } from './transferToolErrors.ts';

/** PEM files for talking to an FTS server over https. */
export type FtsCredentials = Readonly<{
  /** The client certificate (an X.509 proxy holds certificate and key in one file). */
  certificatePath?: string;
  /** The client key (default: the certificate file, as Rucio passes `(usercert, usercert)`). */
  keyPath?: string;
  /** The CA bundle that signs the server's certificate (default: Node's own CAs). */
  caPath?: string;
}>;

/**
 * The credentials from the environment: `DMS_FTS_CERT`, `DMS_FTS_KEY`, `DMS_FTS_CA`, and
 * `X509_USER_PROXY` for certificate and key when `DMS_FTS_CERT` is not set.
 */
export const ftsCredentialsFromEnvironment = (environment: NodeJS.ProcessEnv = process.env): FtsCredentials => {
  const certificatePath = environment.DMS_FTS_CERT || environment.X509_USER_PROXY || undefined;
  return {
    ...(certificatePath ? { certificatePath } : {}),
    ...(environment.DMS_FTS_KEY ? { keyPath: environment.DMS_FTS_KEY } : {}),
    ...(environment.DMS_FTS_CA ? { caPath: environment.DMS_FTS_CA } : {}),
  };
};

export type FtsAnswer = Readonly<{ status: number; text: string }>;

/** Answers larger than this are refused rather than held in memory (a poll of 100 jobs is a few hundred KB). */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * JSON over HTTP(S) to one FTS3 REST server, with keep-alive connections, a deadline per call, and
 * the client certificate when one is configured. Failures to get an answer become
 * TransferToolTimeout or TransferToolUnavailable; any answer, whatever its status, is returned.
 */
export class Fts3Client {
  readonly url: string;
  private readonly agent: HttpAgent | HttpsAgent;
  private readonly secure: boolean;

  constructor(url: string, options: Readonly<{ credentials?: FtsCredentials; rejectUnauthorized?: boolean }> = {}) {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
      throw new Error(`an FTS server URL must be http(s): ${url}`);
    this.url = url.replace(/\/+$/, '');
    this.secure = parsed.protocol === 'https:';
    const credentials = options.credentials ?? {};
    this.agent = this.secure
      ? new HttpsAgent({
          keepAlive: true,
          rejectUnauthorized: options.rejectUnauthorized ?? true,
          ...(credentials.certificatePath
            ? {
                cert: readFileSync(credentials.certificatePath),
                key: readFileSync(credentials.keyPath ?? credentials.certificatePath),
              }
            : {}),
          ...(credentials.caPath ? { ca: readFileSync(credentials.caPath) } : {}),
        })
      : new HttpAgent({ keepAlive: true });
  }

  /** `path` starts with `/`; `body` is sent as JSON. */
  request(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    options: Readonly<{ body?: unknown; timeoutMs: number; bearerToken?: string }>,
  ): Promise<FtsAnswer> {
    const what = `${method} ${this.url}${path}`;
    return new Promise((resolve, reject) => {
      const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
      const send = this.secure ? httpsRequest : httpRequest;
      const request = send(`${this.url}${path}`, {
        method,
        agent: this.agent,
        headers: {
          Accept: 'application/json',
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {}),
          ...(options.bearerToken ? { Authorization: `Bearer ${options.bearerToken}` } : {}),
        },
      });
      let settled = false;
      const fail = (error: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        request.destroy();
        reject(error);
      };
      const deadline = setTimeout(
        () => fail(new TransferToolTimeout(`${what}: no answer within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      request.on('error', (error) => fail(new TransferToolUnavailable(`${what}: ${error.message}`, { cause: error })));
      request.on('response', (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES)
            fail(new TransferToolWrongAnswer(`${what}: answer larger than ${MAX_ANSWER_BYTES} bytes`));
          else chunks.push(chunk);
        });
        response.on('error', (error) =>
          fail(new TransferToolUnavailable(`${what}: ${error.message}`, { cause: error })),
        );
        response.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        });
      });
      request.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The answer's JSON, or TransferToolWrongAnswer naming the call. */
export const jsonOf = (answer: FtsAnswer, what: string): unknown => {
  try {
    return JSON.parse(answer.text);
  } catch {
    throw new TransferToolWrongAnswer(
      `${what}: the answer (${answer.status}) is not JSON: ${answer.text.slice(0, 200)}`,
    );
  }
};

/** FTS's words for an error answer: `message` of its `{status, message}` body, else the text. */
export const ftsErrorMessage = (answer: FtsAnswer): string => {
  try {
    const body = JSON.parse(answer.text) as unknown;
    if (body !== null && typeof body === 'object') {
      const { message, http_message: httpMessage } = body as { message?: unknown; http_message?: unknown };
      if (typeof message === 'string' && message) return message;
      if (typeof httpMessage === 'string' && httpMessage) return httpMessage;
    }
  } catch {
    // not JSON: the text says it
  }
  return answer.text.slice(0, 500) || `HTTP ${answer.status}`;
};
