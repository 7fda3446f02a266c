import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/** An HTTP answer read to its end: the status, headers and text, which parses as JSON or NDJSON on demand. */
export type HttpAnswer = Readonly<{
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json<T = unknown>(): T;
  /** The lines of an NDJSON answer, parsed. */
  lines<T = unknown>(): T[];
}>;

/** Reads a response to its end (the kill matrix's client and the tests' raw client both answer with it). */
export const readAnswer = (res: IncomingMessage): Promise<HttpAnswer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        text,
        json: <T>() => JSON.parse(text) as T,
        lines: <T>() =>
          text
            .split('\n')
            .filter((line) => line.length > 0)
            .map((line) => JSON.parse(line) as T),
      });
    });
    res.on('error', reject);
  });
