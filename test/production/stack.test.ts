import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { Connection } from '@temporalio/client';
import type { ConnectionOptions } from '@temporalio/client';
import { isOpen } from '../../workflows/contracts';
import { waitFor } from '../../scripts/stack/commands';
import { startProductionStack } from '../../scripts/stack/production-stack';
import type { ProductionStack } from '../../scripts/stack/production-stack';
import { StackClient } from '../../scripts/stack/stack-client';

/**
 * galang as production runs it (scripts/stack/): built, NODE_ENV=production, two API processes
 * and two workers from dist/, the Temporal server of docker-compose.yml's version on
 * PostgreSQL behind mutual TLS. Donations go through it end to end the way clients, donors and
 * operators make them, and the money is checked where it lives: galang's ledger and totals, and
 * the provider's record.
 */
describe('the production-shaped stack', () => {
  let stack: ProductionStack;
  let client: StackClient;
  const started: { stack?: ProductionStack; client?: StackClient } = {};
  beforeAll(async () => {
    stack = started.stack = await startProductionStack({
      log: (line) => process.stdout.write(`[stack] ${line}\n`),
    });
    client = started.client = new StackClient(stack);
  }, 900_000);
  afterAll(async () => {
    await started.client?.close();
    await started.stack?.stop();
  }, 60_000);

  /** Waits until the donation's status is no longer open, and returns it. */
  const settled = (id: string) =>
    waitFor(
      `donation ${id} settled`,
      async () => {
        const { body } = await client.donation(id);
        return isOpen(body.status) ? undefined : body.status;
      },
      60_000,
    );

  it('runs in production mode: the API hides its docs and guards /metrics', async () => {
    expect((await fetch(`${stack.apiUrl}/docs`)).status).toBe(404);
    expect((await fetch(`${stack.apiUrl}/metrics`)).status).toBe(401);
    const metrics = await fetch(`${stack.apiUrl}/metrics`, {
      headers: { authorization: `Bearer ${stack.secrets.metricsToken}` },
    });
    expect(metrics.status).toBe(200);
    const ready = await fetch(`${stack.apiUrl}/readyz`);
    expect(await ready.json()).toMatchObject({
      status: 'ready',
      checks: { postgres: 'up', redis: 'up', temporal: 'up', lmdb: 'up' },
    });
  });

  it('lets only holders of a client certificate from its CA reach Temporal', async () => {
    const { pki } = stack;
    const connect = (tls: ConnectionOptions['tls']) =>
      Connection.connect({ address: stack.temporal.address, tls, connectTimeout: 3_000 });
    const serverRootCACertificate = readFileSync(pki.ca);
    const serverNameOverride = pki.frontendName;
    await expect(connect(false)).rejects.toThrow();
    await expect(connect({ serverRootCACertificate, serverNameOverride })).rejects.toThrow();
    const connection = await connect({
      serverRootCACertificate,
      serverNameOverride,
      clientCertPair: {
        crt: readFileSync(pki.clients.operator.cert),
        key: readFileSync(pki.clients.operator.key),
      },
    });
    try {
      const { namespaceInfo } = await connection.workflowService.describeNamespace({
        namespace: stack.temporal.namespace,
      });
      expect(namespaceInfo?.name).toBe('galang');
    } finally {
      await connection.close();
    }
  });

  it('takes, pays, refunds and declines donations, and the money matches everywhere', async () => {
    const campaignId = `stack-${randomUUID().slice(0, 8)}`;
    expect((await client.createCampaign(campaignId)).status).toBe(201);

    const amounts = [10_000, 25_000, 40_000, 55_000];
    const answers = await Promise.all(
      amounts.map((amount, i) =>
        client.donateUntilAnswered(`stack-${campaignId}-${i}`, campaignId, amount),
      ),
    );
    for (const answer of answers) expect(answer.status).toBe(202);
    // A client's retry of a key is answered with the same donation.
    const retry = await client.donateUntilAnswered(
      `stack-${campaignId}-0`,
      campaignId,
      at(amounts, 0),
    );
    expect(retry.body.id).toBe(at(answers, 0).body.id);
    expect(retry.replayed).toBe(true);

    const ids = answers.map((answer) => answer.body.id);
    const payments = await Promise.all(
      ids.map((id) => waitFor(`payment of ${id}`, () => client.paymentId(id), 30_000)),
    );
    // Donors pay three; the bank declines the last. The simulator tells galang by webhook.
    for (const [i, payment] of payments.entries()) {
      expect(await client.movePayment(payment, i === 3 ? 'decline' : 'settle')).toBe(200);
    }
    expect(await Promise.all(ids.map(settled))).toEqual([
      'CONFIRMED',
      'CONFIRMED',
      'CONFIRMED',
      'FAILED',
    ]);

    // An operator refunds the second donation in full.
    expect((await client.refundUntilAnswered(at(ids, 1), `refund-${ids[1]}`)).status).toBe(202);
    await waitFor(
      'refund settled',
      async () =>
        (await client.donation(at(ids, 1))).body.status === 'REFUNDED' ? true : undefined,
      60_000,
    );

    const expected = at(amounts, 0) + at(amounts, 2);
    const campaign = await waitFor(
      'campaign total',
      async () => {
        const { body } = await client.campaign(campaignId);
        return body.confirmedAmount === expected ? body : undefined;
      },
      30_000,
    );
    expect(campaign.donationCount).toBe(2);
    expect(await client.ledger(campaignId)).toEqual({ net: expected, donations: 2 });
    const records = await Promise.all(payments.map((payment) => client.payment(payment)));
    expect(records.map((record) => [record.status, record.refunded_amount])).toEqual([
      ['settled', 0],
      ['settled', at(amounts, 1)],
      ['settled', 0],
      ['declined', 0],
    ]);
    expect((await client.donations(campaignId)).length).toBe(amounts.length);
  });

  it("numbers the confirmations on the worker's schedule and mails each document once", async () => {
    // The test above confirmed three donations and refunded one: three receipts, a credit note.
    const subjects = async () =>
      Promise.all(
        readdirSync(stack.mailDir)
          .filter((name) => name.endsWith('.eml'))
          .map(async (name) => {
            const mail = await simpleParser(readFileSync(path.join(stack.mailDir, name)));
            return `${mail.subject ?? ''} ${mail.attachments[0]?.contentType ?? ''}`;
          }),
      );
    const mails = await waitFor(
      'receipt mail',
      async () => {
        const found = await subjects();
        return found.length >= 4 ? found : undefined;
      },
      60_000,
    );
    expect(
      mails.filter((m) => /^Receipt GLG-\d{4}-\d{6}: .*application\/pdf$/.test(m)),
    ).toHaveLength(3);
    expect(
      mails.filter((m) => /^Credit note GLG-CN-\d{4}-\d{6}: .*application\/pdf$/.test(m)),
    ).toHaveLength(1);
    expect(mails).toHaveLength(4);
  });
});

/** The element at `index`, which the test put there. */
function at<T>(list: readonly T[], index: number): T {
  const value = list[index];
  if (value === undefined) throw new Error(`nothing at ${index}`);
  return value;
}
