import { Agent, request } from 'node:http';
import type { ServerProcess } from './serverProcess.ts';

/** A keep-alive HTTP client for the benchmarks, logged in as root. */
export type Call = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; text: string }>;

export const client = (server: ServerProcess, token: string, maxSockets = 8): Call => {
  const agent = new Agent({ keepAlive: true, maxSockets });
  const send = (
    method: string,
    path: string,
    payload: string | undefined,
    headers: Record<string, string>,
    retried: boolean,
  ): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const req = request(
        new URL(path, server.url),
        {
          method,
          agent,
          headers: {
            'X-Svc-Auth-Token': token,
            ...headers,
            ...(payload ? { 'Content-Length': String(Buffer.byteLength(payload)) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
          res.on('error', reject);
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed for idleness just as this request went out on it:
        // nothing reached the server, so send it again once, on a new socket (as Node's docs advise).
        if (req.reusedSocket && error.code === 'ECONNRESET' && !retried)
          send(method, path, payload, headers, true).then(resolve, reject);
        else reject(error);
      });
      req.end(payload);
    });
  return (method, path, body, headers = {}) =>
    send(method, path, body === undefined ? undefined : JSON.stringify(body), headers, false);
};

export const expectStatus = (response: { status: number; text: string }, status: number, what: string): void => {
  if (response.status !== status) throw new Error(`${what}: ${response.status} ${response.text.slice(0, 300)}`);
};

/** Root's token on a server started with the default root login. */
export const login = async (server: ServerProcess): Promise<string> => {
  const response = await fetch(`${server.url}/auth/userpass`, {
    headers: { 'X-Svc-Username': 'ddmlab', 'X-Svc-Password': 'secret' },
  });
  return response.headers.get('x-svc-auth-token')!;
};
