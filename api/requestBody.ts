import type { IncomingMessage } from 'node:http';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { RucioError, ValueError } from '../domain/shared/errors.ts';

/**
 * Request bodies read by hand rather than by a body parser, so that every way a body can be
 * wrong is a client error in Rucio's format: too large (413, refused from Content-Length before
 * a byte is read), an unknown Content-Encoding (415), bytes that are not what their encoding
 * says (400), text that is not UTF-8 (400). Nothing is ever cut or replaced.
 */

export class RequestEntityTooLarge extends RucioError {
  constructor(limit: number) {
    super('RequestEntityTooLarge', `The request body is larger than the server accepts (${limit} bytes).`, 413);
  }
}

export class RequestTimeout extends RucioError {
  constructor(idleMs: number) {
    super('RequestTimeout', `The request body stopped arriving: nothing came for ${idleMs / 1000} s.`, 408);
  }
}

export class UnsupportedMediaType extends RucioError {
  constructor(message: string) {
    super('UnsupportedMediaType', message, 415);
  }
}

/** Content-Encodings a client may send (Rucio's web server takes none; the Python client sends none). */
const DECODERS: Readonly<Record<string, () => Transform>> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** The declared length, when the client declared one; a declared length above `limit` is refused at once. */
export const refuseDeclaredLength = (request: IncomingMessage, limit: number): void => {
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw new RequestEntityTooLarge(limit);
};

/** Whether the request carries a body at all (a length, or chunks). */
export const hasBody = (request: IncomingMessage): boolean => {
  const declared = request.headers['content-length'];
  return (declared !== undefined && declared !== '0') || request.headers['transfer-encoding'] !== undefined;
};

/**
 * The body as text: at most `limit` bytes once decoded (so a small compressed body cannot grow
 * past it either), decoded from its Content-Encoding, and valid UTF-8. A body that pauses for
 * `idleMs` is refused (408): a client that announces 100 bytes and sends 10 holds nothing for
 * long. Nothing is destroyed here, so the refusal can still be answered on the connection.
 */
export const readBodyText = async (request: IncomingMessage, limit: number, idleMs: number): Promise<string> => {
  refuseDeclaredLength(request, limit);
  const encoding = (request.headers['content-encoding'] ?? '').trim().toLowerCase();
  const encoded = encoding !== '' && encoding !== 'identity';
  let source: Readable = request;
  if (encoded) {
    const decoder = DECODERS[encoding];
    if (!decoder)
      throw new UnsupportedMediaType(
        `Content-Encoding '${encoding}' is not supported; send the body as is, or gzip, deflate or br.`,
      );
    const decoding = decoder();
    request.on('error', (error) => decoding.destroy(error));
    source = request.pipe(decoding);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  await new Promise<void>((resolve, reject) => {
    let idle: NodeJS.Timeout | undefined;
    const finish = (error?: Error) => {
      clearTimeout(idle);
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      request.off('close', onClose);
      if (error) {
        // Stop taking bytes; the answer closes the connection (api/errorAnswers.ts).
        request.pause();
        reject(error);
      } else resolve();
    };
    const wait = () => {
      clearTimeout(idle);
      idle = setTimeout(() => finish(new RequestTimeout(idleMs)), idleMs);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) return finish(new RequestEntityTooLarge(limit));
      chunks.push(chunk);
      wait();
    };
    const onEnd = () => finish();
    const onError = () =>
      finish(
        new ValueError(
          encoded ? `The body is not valid ${encoding} data.` : 'The request body could not be read to its end.',
        ),
      );
    // A client that goes away mid-body: no end will come.
    const onClose = () => {
      if (!request.complete) finish(new ValueError('The request body could not be read to its end.'));
    };
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
    request.once('close', onClose);
    wait();
  });
  try {
    return UTF8.decode(Buffer.concat(chunks, total));
  } catch {
    throw new ValueError('The request body is not valid UTF-8.');
  }
};

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
