import { request as httpRequest, type IncomingMessage } from 'node:http';
import { readAnswer, type HttpAnswer } from '../../bench/lib/httpAnswer.ts';

export type HttpResponse = HttpAnswer;

export type RequestOptions = {
  headers?: Record<string, string>;
  /** A string or bytes are sent as they are; anything else as JSON. Never with a Content-Type, as the Python client does. */
  body?: unknown;
  token?: string;
  /**
   * Send the path exactly as written: `new URL` resolves `..` and `.` segments (also written
   * `%2E%2E`) away, and attacks on names need them to reach the server.
   */
  rawPath?: boolean;
};

/**
 * A raw HTTP/1.1 request with full control over method, headers and body (also on GET and DELETE).
 * A request sent on a kept-alive connection that the server closed as idle in the same instant
 * is sent again once (Node's advice: `reusedSocket` and ECONNRESET): it never reached the server.
 */
export const request = async (
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<HttpResponse> => {
  try {
    return await requestOnce(baseUrl, method, path, options);
  } catch (error) {
    if ((error as { reusedSocket?: boolean }).reusedSocket && (error as NodeJS.ErrnoException).code === 'ECONNRESET') {
      return requestOnce(baseUrl, method, path, options);
    }
    throw error;
  }
};

const requestOnce = (baseUrl: string, method: string, path: string, options: RequestOptions): Promise<HttpResponse> =>
  new Promise((resolve, reject) => {
    const url = new URL(path, baseUrl);
    const body =
      options.body === undefined
        ? undefined
        : typeof options.body === 'string' || Buffer.isBuffer(options.body)
          ? options.body
          : JSON.stringify(options.body);
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.token) headers['X-Svc-Auth-Token'] = options.token;
    if (body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body));
    const onResponse = (res: IncomingMessage): void => {
      readAnswer(res).then(resolve, reject);
    };
    const req = options.rawPath
      ? httpRequest({ hostname: url.hostname, port: url.port, path, method, headers }, onResponse)
      : httpRequest(url, { method, headers }, onResponse);
    req.on('error', (error) => reject(Object.assign(error, { reusedSocket: req.reusedSocket })));
    if (body !== undefined) req.write(body);
    req.end();
  });
