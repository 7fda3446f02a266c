import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on at the moment: one the system gave a probe and took back.
 * Another process may take it before the caller does; callers that start a server on it retry.
 */
export const freeLoopbackPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
