import { request } from 'node:http';

export type StreamFigures = Readonly<{ rows: number; ms: number; firstByteMs: number }>;

/**
 * Sends one request and reads its answer as an NDJSON stream, counting lines: the time to the
 * first byte of the body and to its end, from just before the request is sent.
 */
export const streamLines = (
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<StreamFigures> =>
  new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const start = process.hrtime.bigint();
    const since = () => Number(process.hrtime.bigint() - start) / 1e6;
    let rows = 0;
    let firstByteMs = Number.NaN;
    const req = request(
      new URL(path, url),
      {
        method,
        headers: {
          'X-Svc-Auth-Token': token,
          ...(payload === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(payload)) }),
        },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`${method} ${path}: ${res.statusCode}`));
          return;
        }
        res.on('data', (chunk: Buffer) => {
          if (Number.isNaN(firstByteMs)) firstByteMs = since();
          // indexOf scans natively; a byte-by-byte loop makes the client slower than the server.
          for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) rows += 1;
        });
        res.on('end', () => resolve({ rows, ms: since(), firstByteMs }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
