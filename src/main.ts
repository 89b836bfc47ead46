import { buildApp } from './app.ts';
import { ConfigurationError, loadConfig } from './config/config.ts';
import { startIdleCollector } from './lib/idle-gc.ts';
import { PortUnavailableError, reservePort } from './lib/port-reservation.ts';
import { firstStart, openRuntime } from './runtime.ts';

/**
 * Process entry: config → port → runtime → app → listen; SIGTERM/SIGINT finish in-flight requests and flush the ledger.
 * The configuration and the port are checked before anything is written (DESIGN §14): a bad DATABASE_URL or a busy port
 * exits 1 leaving no data directory, demo user or key behind.
 */
export async function serve(): Promise<void> {
  const config = loadConfig();
  const reservation = await reservePort(config.host, config.port);
  const runtime = await openRuntime(config);
  const app = await buildApp(runtime.dependencies);
  await firstStart(app.services, runtime.dependencies);
  await reservation.release();
  const address = await app.server.listen({ host: config.host, port: config.port, backlog: config.listenBacklog });
  if (!config.publicUrl) app.services.publicUrl.base = address;
  app.services.runner.start();
  const stopCollector = startIdleCollector(app.services.activity);
  console.log(`tollgate listening on ${address}`);

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    runtime.dependencies.logger.info({ signal }, 'stopping: finishing in-flight requests');
    const timer = setTimeout(() => {
      runtime.dependencies.logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, 30_000);
    timer.unref();
    stopCollector();
    // A keep-alive connection whose request finishes after close() began stays open until its client lets go, which
    // would hold the stop for minutes: close connections as they fall idle.
    const closeIdle = setInterval(() => app.server.server.closeIdleConnections(), 100);
    closeIdle.unref();
    await app.close();
    clearInterval(closeIdle);
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  serve().catch((error: unknown) => {
    // The operator's mistakes get their message alone; anything else keeps its stack for a bug report.
    const known = error instanceof ConfigurationError || error instanceof PortUnavailableError;
    console.error(known ? `tollgate: ${error.message}` : error);
    process.exit(1);
  });
}
