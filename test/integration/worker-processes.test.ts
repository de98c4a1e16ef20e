import os from 'node:os';
import pino from 'pino';
import { RECEIPTS_NICENESS, startWorkerProcesses } from '../../src/runtime/worker-processes';
import { runReceipts } from '../support/mail-stack';
import { postDonation, waitForStatus } from '../support/donations';
import { createCampaign, donationBody, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';
import { workerEnv } from '../support/worker-process';

/**
 * The workers `npm start` runs beside the API (WORKER_PROCESSES): real worker processes on the
 * stack's task queue take donations, one more at a lower priority numbers the receipts, and one
 * killed with SIGKILL is replaced.
 */
describe('worker processes', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ noWorker: true, autoPayMs: 100 });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('take donations and receipts in processes of their own; a killed one is replaced', async () => {
    const workers = await startWorkerProcesses(2, 0, pino({ level: 'silent' }), {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      ...workerEnv(stack),
    });
    try {
      const campaignId = await createCampaign(stack.db);
      const donate = async (key: string) => {
        const response = await postDonation(stack.apiUrl, key, donationBody(campaignId));
        expect(response.status).toBe(202);
        const { id } = (await response.json()) as { id: string };
        await waitForStatus(stack, id, 'CONFIRMED');
        return id;
      };
      const confirmed = await donate(`workers-${Date.now()}`);
      const receipts = workers.pids().filter((pid) => os.getPriority(pid) === RECEIPTS_NICENESS);
      expect(receipts).toHaveLength(1);
      // Only the receipts' process polls their task queue: a numbering run there ends, and the
      // confirmation has its receipt.
      await runReceipts(stack);
      const receipt = await stack.db
        .selectFrom('receipts')
        .select('number')
        .where('donation_id', '=', confirmed)
        .executeTakeFirst();
      expect(receipt?.number).toEqual(expect.any(String));

      const [victim, survivor] = workers.pids().filter((pid) => !receipts.includes(pid));
      expect(survivor).toEqual(expect.any(Number));
      process.kill(victim ?? 0, 'SIGKILL');
      const replaced = await eventually(async () => {
        const pids = workers.pids();
        return pids.length === 3 && !pids.includes(victim ?? 0) ? pids : undefined;
      });
      expect(replaced).toContain(survivor);
      await donate(`workers-after-kill-${Date.now()}`);
    } finally {
      await workers.stop();
    }
  }, 120_000);
});
