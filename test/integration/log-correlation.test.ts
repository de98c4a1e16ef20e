import type { LogEntry } from '@temporalio/worker';
import { postDonation, waitForStatus } from '../support/donations';
import { createCampaign, donationBody, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

interface ApiLine {
  reqId?: string;
  correlationId?: string;
  msg?: string;
  donationId?: string;
  req?: { url?: string };
  res?: { statusCode?: number };
}

/**
 * One id finds every line of one donation: the API's request log, the workflow's and the
 * activities' lines, and the log of the webhook request (which has its own request id) that
 * completed the donation.
 */
describe('log correlation', () => {
  let stack: Stack;
  const apiLines: ApiLine[] = [];

  beforeAll(async () => {
    stack = await startStack({
      autoPayMs: 100,
      apiLogger: {
        level: 'info',
        stream: {
          write: (line: string) => {
            apiLines.push(JSON.parse(line) as ApiLine);
          },
        },
      },
    });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('carries the X-Request-Id of the donation into workflow, activity and webhook logs', async () => {
    const campaignId = await createCampaign(stack.db);
    const requestId = `corr-${Date.now()}`;
    const response = await postDonation(
      stack.apiUrl,
      `log-${Date.now()}`,
      donationBody(campaignId),
      { 'x-request-id': requestId },
    );
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    await waitForStatus(stack, id, 'CONFIRMED');

    // The API's own request lines.
    expect(apiLines.filter((l) => l.reqId === requestId).map((l) => l.msg)).toEqual(
      expect.arrayContaining(['incoming request', 'request completed']),
    );

    // The workflow's and the activities' lines (the worker's logger).
    const logs = (globalThis as { galangTemporalLogs?: LogEntry[] }).galangTemporalLogs ?? [];
    const finished = await eventually(async () =>
      logs.find((e) => e.message === 'donation workflow finished' && e.meta?.donationId === id),
    );
    expect(finished.meta).toMatchObject({
      correlationId: requestId,
      sdkComponent: 'workflow',
      status: 'CONFIRMED',
    });
    const confirmed = logs.find(
      (e) => e.message === 'donation confirmed' && e.meta?.donationId === id,
    );
    expect(confirmed?.meta).toMatchObject({
      correlationId: requestId,
      activityType: 'confirmDonation',
    });

    // The webhook request that completed the donation: its own request id, and the donation's.
    const signalled = apiLines.find(
      (l) => l.msg === 'webhook signalled to the donation workflow' && l.donationId === id,
    );
    expect(signalled).toMatchObject({ correlationId: requestId });
    expect(signalled?.reqId).toEqual(expect.any(String));
    expect(signalled?.reqId).not.toBe(requestId);
    const webhookLines = apiLines.filter((l) => l.reqId === signalled?.reqId);
    expect(webhookLines.find((l) => l.msg === 'request completed')).toMatchObject({
      correlationId: requestId,
      res: { statusCode: 200 },
    });

    // And the donation row keeps it, for lines written after the request is gone.
    const row = await stack.db
      .selectFrom('donations')
      .select('correlation_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.correlation_id).toBe(requestId);
  });
});
