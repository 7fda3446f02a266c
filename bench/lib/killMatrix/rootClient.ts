import { request } from 'node:http';
import { readAnswer, type HttpAnswer } from '../httpAnswer.ts';

/** An answer as the kill matrix reads it. */
export type Answer = HttpAnswer;

/** A call as root to whatever the deployment's API address is at the moment of the call. */
export type RootCall = (method: string, path: string, body?: unknown) => Promise<Answer>;

export const ROOT_USERNAME = 'killroot';
export const ROOT_PASSWORD = 'kill-matrix-secret';

/** How long one call may take before it counts as unanswered (a server frozen mid-kill). */
const CALL_TIMEOUT_MS = 120_000;

/**
 * One HTTP request on a connection of its own: a kill cuts connections, and a kept-alive socket
 * to a process that died would only add a failure to tell apart from the kill's own.
 */
export const send = (
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      new URL(path, baseUrl),
      {
        method,
        headers: { ...headers, ...(payload ? { 'Content-Length': String(Buffer.byteLength(payload)) } : {}) },
        timeout: CALL_TIMEOUT_MS,
      },
      (res) => {
        readAnswer(res).then(resolve, reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${CALL_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(payload);
  });

/** Root's calls against the URL `baseUrl()` gives at each call, with a token taken at the first. */
export const rootCalls = (baseUrl: () => string): RootCall => {
  let token: string | undefined;
  const login = async (): Promise<string> =>
    new Promise((resolve, reject) => {
      const req = request(
        new URL('/auth/userpass', baseUrl()),
        {
          method: 'GET',
          headers: { 'X-Svc-Username': ROOT_USERNAME, 'X-Svc-Password': ROOT_PASSWORD },
          timeout: CALL_TIMEOUT_MS,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            const header = res.headers['x-svc-auth-token'];
            if (res.statusCode === 200 && typeof header === 'string') resolve(header);
            else reject(new Error(`root's login answered ${res.statusCode}`));
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('root login: no answer')));
      req.on('error', reject);
      req.end();
    });
  return async (method, path, body) => {
    token ??= await login();
    return send(baseUrl(), method, path, { 'X-Svc-Auth-Token': token }, body);
  };
};
