import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { donationWorkflowId } from '../../workflows/contracts';
import type { DonationWorkflow } from '../../workflows/contracts';
import { effectsOf, totalsOf, waitForStatus, workflowResult } from '../support/donations';
import { ops } from '../support/ops';
import { donate } from '../support/reconciliation';
import { createCampaign, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/** `npm run ops`: each command in-process against the real stack, and the real entry point. */
describe('ops CLI', () => {
  let stack: Stack;
  let campaignId: string;

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: 100 });
  });
  beforeEach(async () => {
    campaignId = await createCampaign(stack.db);
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('exits 0 on --help and 2 on an unknown command, as a spawned process', () => {
    const root = path.resolve(__dirname, '../..');
    const run = (...args: string[]) =>
      spawnSync('npm', ['run', '--silent', 'ops', '--', ...args], { cwd: root, encoding: 'utf8' });
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/dead-letters[\s\S]*reconcile[\s\S]*Exit codes: 0/);
    const bogus = run('frobnicate');
    expect(bogus.status).toBe(2);
    expect(bogus.stderr).toMatch(/Unknown command "frobnicate"/);
  });

  it('answers usage errors with 2 and refusals with 1', async () => {
    expect((await ops(stack, 'refund', 'some-id')).code).toBe(2); // --reason missing
    expect((await ops(stack, 'reset', 'some-id', '--to', 'yesterday')).code).toBe(2);
    expect((await ops(stack, 'dead-letters', '--limit', 'lots')).code).toBe(2);
    expect((await ops(stack, 'show', 'a', 'b')).code).toBe(2);
    expect((await ops(stack, 'show', '--bogus')).code).toBe(2);
    expect((await ops(stack, 'reset', '--help')).out).toMatch(/--to first-task/);
    const missing = await ops(stack, 'show', '00000000-0000-0000-0000-000000000000');
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/No donation/);
  });

  it('lists terminated and needs-review donations as dead letters', async () => {
    const stuck = await donate(stack, campaignId, 10_000, { autoPayMs: -1 });
    const review = await donate(stack, campaignId, 10_000, { payAmount: 1 });
    const fine = await donate(stack, campaignId, 10_000);
    await waitForStatus(stack, stuck, 'AWAITING_PAYMENT');
    await stack.temporal.workflow.getHandle(donationWorkflowId(stuck)).terminate('test');
    await waitForStatus(stack, review, 'NEEDS_REVIEW');
    await waitForStatus(stack, fine, 'CONFIRMED');

    const rows = await eventually(async () => {
      const result = await ops(stack, 'dead-letters', '--campaign', campaignId, '--json');
      const listed = JSON.parse(result.out) as { donationId: string; execution: string }[];
      return listed.length === 2 ? listed : undefined;
    });
    expect(rows).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ donationId: stuck, execution: 'TERMINATED' }),
        expect.objectContaining({ donationId: review, execution: 'COMPLETED' }),
      ]),
    );
    const text = await ops(stack, 'dead-letters', '--campaign', campaignId);
    expect(text.out).toContain(stuck);
    expect(text.out).not.toContain(fine);
  });

  it('shows a donation with its workflow, history and live state', async () => {
    const id = await donate(stack, campaignId, 12_000, { autoPayMs: -1 });
    await waitForStatus(stack, id, 'AWAITING_PAYMENT');
    const shown = await ops(stack, 'show', id, '--json');
    expect(shown.code).toBe(0);
    const doc = JSON.parse(shown.out) as {
      donation: { id: string; status: string };
      workflow: { status: string };
      history: { type: string; detail?: string }[];
      state: { status: string };
    };
    expect(doc.donation).toMatchObject({ id, status: 'AWAITING_PAYMENT' });
    expect(doc.workflow.status).toBe('RUNNING');
    expect(doc.history[0]?.type).toBe('WORKFLOW_EXECUTION_STARTED');
    expect(doc.history).toContainEqual(
      expect.objectContaining({ type: 'MARKER_RECORDED', detail: 'startPayment' }),
    );
    expect(doc.state.status).toBe('AWAITING_PAYMENT');
    await stack.temporal.workflow.getHandle(donationWorkflowId(id)).terminate('test done');
  });

  it('resets a finished donation only with --yes, and the new run repeats no effect', async () => {
    const id = await donate(stack, campaignId, 20_000);
    await workflowResult(stack, id);
    const handle = stack.temporal.workflow.getHandle<DonationWorkflow>(donationWorkflowId(id));
    const { runId } = await handle.describe();
    const before = await effectsOf(stack, id);

    const dry = await ops(stack, 'reset', id, '--to', 'first-task');
    expect(dry.code).toBe(0);
    expect(dry.out).toMatch(/Would reset[\s\S]*confirmDonation[\s\S]*Dry run/);
    expect((await handle.describe()).runId).toBe(runId);
    expect(await effectsOf(stack, id)).toEqual(before);

    const done = await ops(stack, 'reset', id, '--to', 'first-task', '--yes');
    expect(done.code).toBe(0);
    const { newRunId } = JSON.parse(done.out.replace(/^Reset:\n/, '')) as { newRunId: string };
    expect(newRunId).not.toBe(runId);
    expect(
      await stack.temporal.workflow
        .getHandle<DonationWorkflow>(handle.workflowId, newRunId)
        .result(),
    ).toMatchObject({ status: 'CONFIRMED', credited: false });
    const after = await effectsOf(stack, id);
    expect(after.ledger).toEqual(before.ledger);
    expect(after).toMatchObject({ donations: 1, charges: 1 });
  });

  it('refunds only with --yes, through the same refund workflow as the API', async () => {
    const id = await donate(stack, campaignId, 40_000);
    await waitForStatus(stack, id, 'CONFIRMED');

    const dry = await ops(stack, 'refund', id, '--amount', '15000', '--reason', 'donor asked');
    expect(dry.err).toBe('');
    expect(dry.code).toBe(0);
    expect(dry.out).toMatch(/"refundAmount": 15000[\s\S]*Dry run/);
    const workflowId = /"workflowId": "([^"]+)"/.exec(dry.out)?.[1] ?? '';
    expect(workflowId).toMatch(new RegExp(`^refund-request-${id}-ops-`));
    await expect(stack.temporal.workflow.getHandle(workflowId).describe()).rejects.toThrow();
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 40_000,
      donation_count: 1,
    });

    const args = ['refund', id, '--amount', '15000', '--reason', 'donor asked', '--yes'];
    expect((await ops(stack, ...args)).code).toBe(0);
    await waitForStatus(stack, id, 'PARTIALLY_REFUNDED');
    // The same command again is the same request: it meets the finished workflow.
    expect((await ops(stack, ...args)).code).toBe(0);
    expect(stack.simulator.paymentByReference(id)?.refunds).toHaveLength(1);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 25_000,
      donation_count: 1,
    });
  });
});
