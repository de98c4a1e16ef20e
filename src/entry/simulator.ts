import { runEntry } from '../runtime/entry';
import { startSimulator } from '../runtime/start-parts';

/** The payment simulator on its own, for a deployment that tests against it. */
runEntry('simulator', async (config, log, parts) => {
  const simulator = await startSimulator(config);
  parts.push(simulator);
  log.info({ url: simulator.url, webhookUrl: config.simulator.webhookUrl }, 'simulator listening');
});
