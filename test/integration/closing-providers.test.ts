import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { createDatabase } from '../../src/db/database';
import { DonationRepository } from '../../src/donations/donation-repository';
import { removeStoreFiles } from '../../src/idempotency/claims-location';
import { donationWorkflowId } from '../../workflows/contracts';
import { apiEnv, spawnApi } from '../support/api-process';
import { runUntilExit } from '../support/child-entry';
import { postDonation } from '../support/donations';
import { createOwnDatabase } from '../support/own-database';
import type { OwnDatabase } from '../support/own-database';
import { MIDTRANS_SERVER_KEY, createCampaign, donationBody, startStack } from '../support/stack';
import type { Stack } from '../support/stack';
import { workerEnv } from '../support/worker-process';

/** `env` without the named variables. */
function without(env: Record<string, string>, ...names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !names.includes(name)));
}

/**
 * Retiring a payment provider: PROVIDERS_CLOSING keeps its credentials (its webhooks and open
 * donations are served until they end) and takes no new donations on it; removing it while
 * donations are still open on it is refused at boot, against the donations table.
 */
describe('a closing payment provider', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { PROVIDERS_CLOSING: 'simulator' } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('takes no new donations, with a problem saying so, and still has its webhook route', async () => {
    const campaignId = await createCampaign(stack.db);
    const response = await postDonation(
      stack.apiUrl,
      `closing-${randomUUID()}`,
      donationBody(campaignId),
    );
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({
      code: 'provider-closing',
      title: 'The payment provider takes no new donations',
    });
    const webhook = await fetch(`${stack.apiUrl}/v1/webhooks/simulator`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    // Its route is there (unsigned: 401), not gone (404).
    expect(webhook.status).toBe(401);
  });

  describe('at boot', () => {
    let own: OwnDatabase;
    const lmdbDirs: string[] = [];

    beforeAll(async () => {
      own = await createOwnDatabase(`closing_${randomUUID().slice(0, 8)}`);
      const db = createDatabase({ connectionString: own.url, max: 1 });
      try {
        const campaignId = await createCampaign(db);
        // A donation still waiting for its Midtrans payment.
        const donationId = randomUUID();
        await new DonationRepository(db).insert({
          ...donationBody(campaignId),
          donationId,
          clientId: 'client-a',
          idempotencyKey: `open-${donationId}`,
          workflowId: donationWorkflowId(donationId),
          provider: 'midtrans',
          paymentTimeoutSeconds: 900,
          correlationId: 'test',
        });
      } finally {
        await db.destroy();
      }
    });
    afterAll(async () => {
      for (const dir of lmdbDirs) removeStoreFiles(dir);
      await own.drop();
    });
    const lmdbPath = () => {
      const dir = path.join(os.tmpdir(), `galang-closing-${randomUUID()}`);
      lmdbDirs.push(dir);
      return dir;
    };

    it('refuses to start the API and the worker without a provider whose donations are open', async () => {
      const dropped = ['MIDTRANS_SERVER_KEYS', 'MIDTRANS_BASE_URL'];
      const [api, worker] = await Promise.all([
        runUntilExit('api', {
          ...without(apiEnv(stack.config), ...dropped),
          DATABASE_URL: own.url,
          LMDB_PATH: lmdbPath(),
        }),
        runUntilExit('worker', { ...without(workerEnv(stack), ...dropped), DATABASE_URL: own.url }),
      ]);
      for (const result of [api, worker]) {
        expect(result.code).toBe(78);
        expect(result.stderr).toMatch(
          /Boot refused: payment providers: donations are still open on midtrans \(1\), .* PROVIDERS_CLOSING=midtrans/,
        );
      }
    }, 120_000);

    it('starts with the provider closing, and says how many of its donations are open', async () => {
      const api = await spawnApi(stack.config, {
        DATABASE_URL: own.url,
        LMDB_PATH: lmdbPath(),
        MIDTRANS_SERVER_KEYS: MIDTRANS_SERVER_KEY,
        PROVIDERS_CLOSING: 'midtrans',
      });
      try {
        const line = await api.line((entry) => entry.includes('"provider closing'));
        expect(JSON.parse(line) as unknown).toMatchObject({
          provider: 'midtrans',
          openDonations: 1,
        });
      } finally {
        await api.stop();
      }
    }, 120_000);
  });
});
