import { Agent, request } from 'node:http';
import type { ServerProcess } from './serverProcess.ts';

/** A keep-alive HTTP client for the benchmarks, logged in as root. */
export type Call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; text: string }>;

export const client = (server: ServerProcess, token: string, maxSockets = 8): Call => {
  const agent = new Agent({ keepAlive: true, maxSockets });
  return (method, path, body, headers = {}) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        new URL(path, server.url),
        { method, agent, headers: { 'X-Svc-Auth-Token': token, ...headers, ...(payload ? { 'Content-Length': String(Buffer.byteLength(payload)) } : {}) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
};

export const expectStatus = (response: { status: number; text: string }, status: number, what: string): void => {
  if (response.status !== status) throw new Error(`${what}: ${response.status} ${response.text.slice(0, 300)}`);
};

/** Root's token on a server started with the default root login. */
export const login = async (server: ServerProcess): Promise<string> => {
  const response = await fetch(`${server.url}/auth/userpass`, { headers: { 'X-Svc-Username': 'ddmlab', 'X-Svc-Password': 'secret' } });
  return response.headers.get('x-svc-auth-token')!;
};
