import { buildApp } from './app.ts';
import { loadConfig } from './config/config.ts';
import { startIdleCollector } from './lib/idle-gc.ts';
import { firstStart, openRuntime } from './runtime.ts';

/** Process entry: config → runtime → app → listen; SIGTERM/SIGINT finish in-flight requests and flush the ledger. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  const runtime = await openRuntime(config);
  const app = await buildApp(runtime.dependencies);
  await firstStart(app.services, runtime.dependencies);
  const address = await app.server.listen({ host: config.host, port: config.port });
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
    await app.close();
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  serve().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
