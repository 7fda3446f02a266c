import { forget, token } from './session.js';

/** An error answer of the API, with Rucio's exception class and message. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} exceptionClass
   * @param {string} message
   */
  constructor(status, exceptionClass, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.exceptionClass = exceptionClass;
  }
}

/** @typedef {{ method?: string, body?: unknown, headers?: Record<string, string>, signal?: AbortSignal, anonymous?: boolean }} CallOptions */

/**
 * One call to this server's API with the tab's token. A refused token (expired, revoked) ends the
 * session: the console goes back to its login page.
 * @param {string} path
 * @param {CallOptions} [options]
 * @returns {Promise<Response>}
 */
export const call = async (path, options = {}) => {
  /** @type {Record<string, string>} */
  const headers = { ...(options.headers ?? {}) };
  const current = token();
  if (current && !options.anonymous) headers['X-Svc-Auth-Token'] = current;
  /** @type {RequestInit} */
  const init = { method: options.method ?? 'GET', headers, cache: 'no-store' };
  if (options.signal) init.signal = options.signal;
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(options.body);
  }
  const response = await fetch(path, init);
  if (response.ok) return response;
  const error = await errorOf(response);
  if (error.exceptionClass === 'CannotAuthenticate' && current && !options.anonymous) {
    forget();
    window.dispatchEvent(new CustomEvent('dms:session-ended', { detail: error.message }));
  }
  throw error;
};

/**
 * Rucio's error format: ExceptionClass and ExceptionMessage in the JSON body (or the headers).
 * @param {Response} response
 */
const errorOf = async (response) => {
  const text = await response.text();
  let exceptionClass = response.headers.get('ExceptionClass') ?? `HTTP ${response.status}`;
  let message = response.headers.get('ExceptionMessage') ?? (text || response.statusText);
  try {
    const body = JSON.parse(text);
    if (body && typeof body === 'object' && 'ExceptionClass' in body) {
      exceptionClass = String(body.ExceptionClass);
      message = String(body.ExceptionMessage);
    }
  } catch {
    // Not JSON: the headers, or the text, say it.
  }
  return new ApiError(response.status, exceptionClass, message);
};

/**
 * A JSON answer.
 * @param {string} path
 * @param {CallOptions} [options]
 * @returns {Promise<any>}
 */
export const getJson = async (path, options) => {
  const response = await call(path, options);
  const text = await response.text();
  return text === '' ? null : JSON.parse(text);
};

/**
 * The lines of an NDJSON answer as they arrive; stopping early (break) cancels the rest.
 * @param {string} path
 * @param {CallOptions} [options]
 * @returns {AsyncGenerator<any>}
 */
export async function* lines(path, options) {
  const response = await call(path, options);
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (line) yield JSON.parse(line);
        newline = buffer.indexOf('\n');
      }
    }
    if (buffer.trim()) yield JSON.parse(buffer);
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * Every line of an NDJSON answer, at most `max` (the rest is not read).
 * @param {string} path
 * @param {number} [max]
 * @param {CallOptions} [options]
 * @returns {Promise<any[]>}
 */
export const allLines = async (path, max = 10_000, options) => {
  const found = [];
  for await (const line of lines(path, options)) {
    found.push(line);
    if (found.length >= max) break;
  }
  return found;
};

/**
 * A page reader over an NDJSON listing: `next(n)` gives the next n lines (fewer at the end).
 * The listing is one streamed answer read as far as asked, so a dataset of a million files
 * shows its first page at once.
 * @param {string} path
 * @param {CallOptions} [options]
 */
export const pager = (path, options) => {
  const iterator = lines(path, options);
  let finished = false;
  return {
    /** @param {number} count @returns {Promise<any[]>} */
    async next(count) {
      const page = [];
      while (!finished && page.length < count) {
        const item = await iterator.next();
        if (item.done) finished = true;
        else page.push(item.value);
      }
      return page;
    },
    get finished() {
      return finished;
    },
    async close() {
      finished = true;
      await iterator.return(undefined);
    },
  };
};

/** A path segment: scope, name, RSE, ... (a DID name's slashes too: the server decodes them back). */
export const part = encodeURIComponent;

/** @param {string} scope @param {string} name */
export const didPath = (scope, name) => `${part(scope)}/${part(name)}`;

/**
 * A query string from the given pairs, leaving out empty values.
 * @param {Record<string, string | number | boolean | null | undefined>} pairs
 */
export const query = (pairs) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(pairs)) {
    if (value === undefined || value === null || value === '') continue;
    search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
};
