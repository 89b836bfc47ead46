import { createServer } from 'node:net';

/** A listening address held for the gateway; `release` frees it just before the gateway itself listens there. */
export interface PortReservation {
  release(): Promise<void>;
}

/**
 * Binds `host:port` before the gateway writes anything on a first start (data directory, demo user and key), so a busy
 * port fails fast and leaves no trace. Port 0 (any free port) cannot be busy and is not reserved.
 */
export async function reservePort(host: string, port: number): Promise<PortReservation> {
  if (port === 0) return { release: async () => {} };
  // A client that connects meanwhile (a load balancer or a benchmark polling /healthz) is turned away at once: a held
  // connection would keep `close()` from finishing, and the gateway would never listen.
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EADDRINUSE' ? 'is already in use' : `cannot be bound (${error.code ?? error.message})`;
      reject(new PortUnavailableError(`${host}:${port} ${reason}; set PORT (and HOST) to a free address`));
    });
    server.listen({ host, port, exclusive: true }, resolve);
  });
  return { release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export class PortUnavailableError extends Error {
  override readonly name = 'PortUnavailableError';
}
