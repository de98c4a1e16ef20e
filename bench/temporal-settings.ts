import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SQLITE_PRAGMAS, startDevServer, stopDevServer } from '../src/temporal/dev-server';
import type { DevServerOptions } from '../src/temporal/dev-server';
import { freePort } from '../test/support/free-port';
import { calibrate } from './spike-load';
import { startCalibrationWorker } from './spike-stack';

/**
 * `npm run bench:temporal-settings`: the dev server's load settings (src/temporal/dev-server.ts)
 * against variants without one of them, on the calibration workflow alone (update-with-start,
 * two local activities), interleaved in rounds so a busy machine hurts each variant alike.
 * Every variant gets a fresh server on a database file, as `npm start` runs it. The worker is
 * sized by the WORKER_* settings, so they can be compared by running it with other values.
 * TEMPORAL_SETTINGS_IN_FLIGHT (20,50), _SECONDS (10), _ROUNDS (3).
 */
const env = process.env;
const IN_FLIGHT = (env.TEMPORAL_SETTINGS_IN_FLIGHT ?? '20,50').split(',').map(Number);
const SECONDS = Number(env.TEMPORAL_SETTINGS_SECONDS ?? 10);
const ROUNDS = Number(env.TEMPORAL_SETTINGS_ROUNDS ?? 3);

type Settings = Pick<DevServerOptions, 'dynamicConfig' | 'sqlitePragmas' | 'goGc'>;

const variants: [string, Settings][] = [
  ['load settings (npm start)', {}],
  ['default SQLite journal and sync', { sqlitePragmas: [] }],
  ['GOGC=200', { goGc: 200 }],
  ['GOGC=400', { goGc: 400 }],
  [
    'SQLite cache 64 MiB, mmap 256 MiB',
    { sqlitePragmas: [...SQLITE_PRAGMAS, 'cache_size=-65536', 'mmap_size=268435456'] },
  ],
  [
    'four task-queue partitions',
    {
      dynamicConfig: {
        'matching.numTaskqueueReadPartitions': 4,
        'matching.numTaskqueueWritePartitions': 4,
      },
    },
  ],
];

async function measure(settings: Settings, inFlight: number): Promise<number> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'galang-temporal-settings-'));
  const port = await freePort();
  await startDevServer({
    port,
    uiPort: await freePort(),
    stateDir,
    dbFile: path.join(stateDir, 'temporal.db'),
    ...settings,
  });
  const address = `127.0.0.1:${port}`;
  const worker = await startCalibrationWorker(address, 'calibration');
  try {
    await calibrate(address, 'calibration', inFlight, 2);
    return (await calibrate(address, 'calibration', inFlight, SECONDS)).perSecond;
  } finally {
    await worker.stop();
    await stopDevServer(stateDir, port);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const say = (line = '') => process.stdout.write(`${line}\n`);
  const rates = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const inFlight of IN_FLIGHT) {
      for (const [name, settings] of variants) {
        const key = `${name}|${inFlight}`;
        rates.set(key, [...(rates.get(key) ?? []), await measure(settings, inFlight)]);
      }
    }
  }
  say('## Dev server settings, calibration workflow (update-with-start, two local activities)');
  say();
  say(
    `| settings | ${IN_FLIGHT.map((n) => `${n} in flight: workflows/s per round`).join(' | ')} |`,
  );
  say(`|---|${IN_FLIGHT.map(() => '---').join('|')}|`);
  for (const [name] of variants) {
    const cells = IN_FLIGHT.map((n) =>
      (rates.get(`${name}|${n}`) ?? []).map((r) => r.toFixed(1)).join(', '),
    );
    say(`| ${name} | ${cells.join(' | ')} |`);
  }
  say();
}

void main();
