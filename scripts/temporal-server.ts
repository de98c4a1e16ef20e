import path from 'node:path';
import { ensureTemporalBinary, startDevServer, stopDevServer } from '../src/temporal/dev-server';

/**
 * `npm run temporal -- ensure|start|stop [port] [uiPort]`: build the Temporal CLI if missing,
 * start the dev server in the background (state under .data/temporal), or stop it.
 */
async function main(): Promise<void> {
  const [command = 'help', port = '7233', uiPort = '8233'] = process.argv.slice(2);
  const stateDir = path.resolve('.data', 'temporal');
  const say = (line: string) => process.stdout.write(`${line}\n`);
  switch (command) {
    case 'ensure':
      say(ensureTemporalBinary(say));
      return;
    case 'start': {
      const server = await startDevServer({
        port: Number(port),
        uiPort: Number(uiPort),
        dbFile: path.join(stateDir, 'temporal.db'),
        stateDir,
        log: say,
      });
      say(`Temporal dev server on ${server.address}, UI ${server.uiUrl}, pid ${server.pid}`);
      return;
    }
    case 'stop':
      say((await stopDevServer(stateDir, Number(port))) ? 'stopped' : 'not running');
      return;
    default:
      say('usage: npm run temporal -- ensure | start [port] [uiPort] | stop [port]');
      process.exitCode = command === 'help' ? 0 : 64;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
