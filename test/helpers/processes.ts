import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A port free right now on 127.0.0.1 (for a gateway started as a process, whose port the test must know). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves with the first match of `pattern` in the child's stdout; rejects if the child exits first. */
export function waitForOutput(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('utf8');
      const match = pattern.exec(text);
      if (match) {
        child.stdout?.off('data', onData);
        child.off('exit', onExit);
        resolve(match[0]);
      }
    };
    const onExit = (code: number | null): void => reject(new Error(`the process exited (${code}) before printing ${pattern}: ${text}`));
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}
