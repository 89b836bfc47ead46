// Runs inside a fresh network namespace (`unshare -n`): brings up loopback, listens on 127.0.0.1:<port> and pipes each
// connection to <socket> (a unix socket a forwarder outside the namespace serves), then runs <command> and exits with its code.
// Plain JavaScript so it starts without a compiler. Usage: node loopback-namespace-inner.mjs <port> <socket> <command> [args…]
import { execFileSync, spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';

const [port, socketPath, command, ...args] = process.argv.slice(2);
if (!port || !socketPath || !command) {
  process.stderr.write('usage: loopback-namespace-inner.mjs <port> <socket> <command> [args…]\n');
  process.exit(2);
}
execFileSync('ip', ['link', 'set', 'lo', 'up']);
const server = createServer((client) => {
  const upstream = connect(socketPath);
  client.pipe(upstream).pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(command, args, { stdio: 'inherit' });
  child.on('error', (error) => {
    process.stderr.write(`cannot start ${command}: ${error.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
});
