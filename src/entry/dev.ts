import path from 'node:path';
import { DEV_API_KEYS } from '../config/config';
import { CampaignRepository } from '../campaigns/campaign-repository';
import { DEMO_CAMPAIGN_ID } from '../demo-page/demo-page-plugin';
import { sinkHostOf } from '../config/mail-config';
import { startMailSink } from '../mail/mail-sink';
import { openDatabase } from '../runtime/open-resources';
import { runEntry } from '../runtime/entry';
import { startApiCluster } from '../runtime/api-cluster';
import { startSimulator } from '../runtime/start-parts';
import { startWorkerProcesses } from '../runtime/worker-processes';
import { isPortOpen, parseAddress, startDevServer, stopDevServer } from '../temporal/dev-server';

/**
 * `npm start`: the whole pipeline on one machine. Uses a Temporal server already answering at
 * TEMPORAL_ADDRESS or starts the dev server (building the CLI the first time), then migrates,
 * seeds the `demo` campaign, runs the mail sink (while SMTP_URL is its port) and the simulator in
 * this process, WORKER_PROCESSES worker processes and API_PROCESSES API processes: none of them
 * waits on another's event loop.
 */
runEntry('galang', async (config, log, parts) => {
  const say = (line = '') => process.stdout.write(`${line}\n`);
  const pageUrl = `${config.publicUrl}/`;
  // First, so a newcomer sees where to go before the logs of everything starting.
  if (config.demoPage) say(`Campaign page: ${pageUrl}  (ready once "galang is up" is printed)`);
  // Early, like the page line, and before any worker sends; only while SMTP_URL is its port.
  const sinkHost = sinkHostOf(config.mail);
  if (sinkHost !== undefined) {
    const sink = await startMailSink({
      host: sinkHost,
      port: config.mail.sinkPort,
      dir: config.mail.sinkDir,
      log,
    });
    parts.push({ name: 'mail-sink', stop: () => sink.stop() });
    say(`Mail sink: saving messages under ${sink.dir}`);
  }

  const { host, port } = parseAddress(config.temporal.address);
  let uiUrl = config.temporal.uiUrl;
  if (await isPortOpen(host, port)) {
    log.info({ address: config.temporal.address }, 'using the Temporal server already running');
  } else {
    say(`Starting the Temporal dev server on ${config.temporal.address} ...`);
    const stateDir = path.join(config.dataDir, 'temporal');
    const server = await startDevServer({
      port,
      uiPort: config.temporal.uiPort,
      dbFile: path.join(stateDir, 'temporal.db'),
      stateDir,
      namespace: config.temporal.namespace,
      codecEndpoint: `${config.publicUrl}/v1/codec`,
      log: say,
    });
    uiUrl = server.uiUrl;
    parts.push({
      name: 'temporal',
      stop: () => stopDevServer(stateDir, port).then(() => undefined),
    });
  }

  const db = await openDatabase(config);
  parts.push({ name: 'db', stop: () => db.destroy() });
  await new CampaignRepository(db).create({
    id: DEMO_CAMPAIGN_ID,
    title: 'Demo campaign: clean water for Desa Sukamaju',
    goalAmount: 100_000_000,
    currency: 'IDR',
  });

  parts.push(await startSimulator(config));
  if (config.worker.processes > 0) {
    parts.push(await startWorkerProcesses(config.worker.processes, config.workerMetricsPort, log));
  }
  parts.push(await startApiCluster(config.apiProcesses, log));

  // The demo key is printed only while it is the one configured (API_KEYS unset).
  const [clientId = '', demoSecret] = DEV_API_KEYS.split(':');
  const secret = config.apiKeys.get(clientId) === demoSecret ? demoSecret : undefined;
  const key = `demo-${Date.now()}`;
  say();
  say(`galang is up.`);
  if (config.demoPage) say(`  Campaign     ${pageUrl}  (donate from the browser)`);
  say(`  API          ${config.publicUrl}  (${config.apiProcesses} process(es))`);
  say(`  Workers      ${config.worker.processes} process(es) on ${config.temporal.taskQueue}`);
  say(`  Temporal UI  ${uiUrl}  (namespace ${config.temporal.namespace})`);
  say(
    `               payloads are encrypted; the UI decrypts them at ${config.publicUrl}/v1/codec`,
  );
  say(`  Metrics      ${config.publicUrl}/metrics (API), API docs ${config.publicUrl}/docs`);
  if (config.workerMetricsPort > 0 && config.worker.processes > 0) {
    const ports = Array.from(
      { length: config.worker.processes },
      (_, i) => config.workerMetricsPort + i,
    );
    say(`               http://${config.host}:${ports.join('|')}/metrics (workers)`);
  }
  say(
    `  Simulator    ${config.simulator.url}  (settles payments after ${config.simulator.autoPayMs} ms)`,
  );
  if (secret) say(`  Dev client   ${clientId} / ${secret}  (set API_KEYS to replace)`);
  say();
  say('Donate (run it twice: the second answer is a replay of the first):');
  say(`curl -i -X POST ${config.publicUrl}/v1/donations \\`);
  say(`  -H 'Authorization: Bearer ${secret ?? '<your API key>'}' \\`);
  say(`  -H 'Idempotency-Key: ${key}' \\`);
  say(`  -H 'Content-Type: application/json' \\`);
  say(
    `  -d '{"campaignId":"demo","amount":50000,"currency":"IDR","donor":{"name":"Ani","email":"ani@example.com","anonymous":false},"message":"Semangat!","paymentMethod":"qris"}'`,
  );
  say();
  say(`Then: curl ${config.publicUrl}/v1/campaigns/demo/progress`);
  say('Ctrl-C stops everything.');
});
