import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import type { Logger } from '../infra/logger.ts';
import { errorHeaderValue } from './errorAnswers.ts';
import { pythonJson } from './pythonJson.ts';

/** The bounds of api/httpServer.ts (ServiceConfig.connections). */
export type ConnectionBounds = Readonly<{
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** Connections one address may hold at once; 0: no bound. */
  maxPerAddress: number;
}>;

/** How often Node looks for requests past their time (its default, 30 s, would let one run 30 s late). */
const CHECK_INTERVAL_MS = 1000;

/**
 * The HTTP server around the Koa app. Node answers some requests before Koa sees them (headers
 * too large, bytes that are not HTTP, a request too slow to arrive, `Expect: 100-continue`); here
 * those answers take Rucio's error format too, and a body announced larger than the limit is
 * refused before the client sends it.
 *
 * Every connection is bounded in time (docs/security.md, "Connections"): its headers must arrive
 * within `headersTimeoutMs` and its whole request within `requestTimeoutMs` (else `408`, by Node's
 * own clock, checked every second), a body may not pause longer than the body idle timeout (the
 * body reader, api/requestBody.ts) and an idle keep-alive connection is closed after
 * `keepAliveTimeoutMs`. Without a trusted proxy in front, one client address may hold at most
 * `maxPerAddress` connections: requests on the ones past that are answered `429` and closed.
 */
export const createHttpServer = (
  app: Koa<never>,
  options: { maxBodyBytes: number; logger: Logger; bounds: ConnectionBounds; trustProxy: boolean },
): Server => {
  const { bounds } = options;
  const handler = app.callback();
  /** Connections past their address's bound: their requests are refused. */
  const overCapacity = new WeakSet<Socket>();
  const server = createServer(
    {
      headersTimeout: bounds.headersTimeoutMs,
      requestTimeout: bounds.requestTimeoutMs,
      keepAliveTimeout: bounds.keepAliveTimeoutMs,
      connectionsCheckingInterval: CHECK_INTERVAL_MS,
    },
    (request, response) => {
      if (!overCapacity.has(request.socket)) {
        // Koa answers every error of a request itself: the promise of its handling never rejects.
        void handler(request, response);
        return;
      }
      const message = `Too many connections from this address (at most ${bounds.maxPerAddress} at once).`;
      const body = pythonJson({ ExceptionClass: 'TooManyConnections', ExceptionMessage: message });
      response.writeHead(429, {
        ...errorHeaders('TooManyConnections', message),
        'Content-Length': Buffer.byteLength(body),
        Connection: 'close',
      });
      response.end(body);
    },
  );
  server.keepAliveTimeout = bounds.keepAliveTimeoutMs;
  // Behind a proxy every connection comes from the proxy: the bound would be on it, not on clients.
  if (!options.trustProxy && bounds.maxPerAddress > 0) {
    const open = new Map<string, number>();
    server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? '';
      const count = (open.get(address) ?? 0) + 1;
      open.set(address, count);
      if (count > bounds.maxPerAddress) {
        overCapacity.add(socket);
        options.logger.warn({ address, connections: count }, 'too many connections from one address');
      }
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left <= 0) open.delete(address);
        else open.set(address, left);
      });
    });
  }
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const answer = clientErrorAnswer(error.code);
    // A reset connection, or one whose answer is under way, cannot take another.
    if (
      !answer ||
      !socket.writable ||
      (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage?.headersSent
    ) {
      socket.destroy();
      return;
    }
    options.logger.info({ code: error.code, status: answer.status }, 'refused a malformed request');
    socket.end(rawErrorResponse(answer.status, answer.exceptionClass, answer.message));
  });
  // Without this handler Node says "100 Continue" to any body; one announced too large is refused first.
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > options.maxBodyBytes) {
      const body = pythonJson({
        ExceptionClass: 'RequestEntityTooLarge',
        ExceptionMessage: tooLargeMessage(options.maxBodyBytes),
      });
      response.writeHead(413, {
        ...errorHeaders('RequestEntityTooLarge', tooLargeMessage(options.maxBodyBytes)),
        'Content-Length': Buffer.byteLength(body),
        Connection: 'close',
      });
      response.end(body);
      return;
    }
    response.writeContinue();
    server.emit('request', request, response);
  });
  return server;
};

const tooLargeMessage = (limit: number) => `The request body is larger than the server accepts (${limit} bytes).`;

type Answer = Readonly<{ status: number; exceptionClass: string; message: string }>;

/** What Node's parser error means for the client; undefined for a connection that is gone. */
const clientErrorAnswer = (code: string | undefined): Answer | undefined => {
  if (code === 'ECONNRESET' || code === 'EPIPE') return undefined;
  if (code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      exceptionClass: 'RequestHeaderFieldsTooLarge',
      message: 'The request headers are larger than the server accepts.',
    };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, exceptionClass: 'RequestTimeout', message: 'The request did not arrive in time.' };
  }
  return {
    status: 400,
    exceptionClass: 'ValueError',
    message: `The request is not valid HTTP (${code ?? 'unknown error'}).`,
  };
};

const errorHeaders = (exceptionClass: string, message: string): Record<string, string> => ({
  ExceptionClass: errorHeaderValue(exceptionClass),
  ExceptionMessage: errorHeaderValue(message),
  'Content-Type': 'application/octet-stream',
});

/** A whole HTTP/1.1 answer written on the socket, for requests Node never handed to the app. */
const rawErrorResponse = (status: number, exceptionClass: string, message: string): string => {
  const body = pythonJson({ ExceptionClass: exceptionClass, ExceptionMessage: message });
  const headers = {
    ...errorHeaders(exceptionClass, message),
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  };
  const reason =
    { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[status] ?? 'Error';
  return `HTTP/1.1 ${status} ${reason}\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n')}\r\n\r\n${body}`;
};
