/**
 * Applies one generated history to the real stack: the donation through the API, the provider's
 * moves through the simulator's test controls (real signed webhooks), operator refunds through
 * the API's refund route, resets and a killed worker at their points; then waits until nothing
 * moves and compares what the stack holds with what the reference model expects.
 */
import { randomUUID } from 'node:crypto';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import type { PaymentPlan } from '../../src/providers/simulator/simulator-server';
import type { SimulatorPayment } from '../../src/providers/simulator/simulator-protocol';
import { clientAScope, postDonationUntilAccepted } from '../support/donations';
import { createCampaign, donationBody } from '../support/stack';
import type { History, HistoryStep, RefundStart } from './history';
import { describeHistory, describeStep } from './history';
import { MoneyModel, expectedMoney } from './reference-model';
import { debugLines } from './case-debug';
import { compare, observe, waitUntilQuiet } from './money-observe';
import type { CaseIds } from './money-observe';
import {
  resetDonationWorkflow,
  waitForDeadlineTimer,
  waitForStatusChange,
} from './workflow-control';
import type { DriverContext } from './driver-context';
import {
  control,
  newRefund,
  paymentMovePath,
  postOperatorRefund,
  refundPlans,
} from './simulator-control';

export interface CaseResult {
  history: History;
  donationId: string;
  /** Empty when the stack holds what the model expects. */
  problems: string[];
  /** The whole story, printed when a case fails. */
  report: string;
}

class CaseRun {
  readonly log: string[] = [];
  readonly ids: CaseIds;
  private readonly started = Date.now();
  private readonly model: MoneyModel;
  private plan: PaymentPlan;
  private payment: SimulatorPayment | undefined;
  /** What each notifying step left behind, for a later redelivery of it. */
  private readonly notified = new Map<number, { objectId: string; status: string }>();
  private readonly operatorRequests = new Map<string, { key: string; body: string }>();

  constructor(
    private readonly ctx: DriverContext,
    readonly history: History,
    campaignId: string,
  ) {
    const key = `money-${history.seed}-${history.index}-${randomUUID().slice(0, 8)}`;
    this.ids = {
      key,
      donationId: deriveUuid(clientAScope(key)),
      campaignId,
      providerReference: undefined,
      names: new Map(),
    };
    this.model = new MoneyModel(history);
    this.plan = {
      autoPayMs: -1,
      ...(history.paidAmount !== undefined && { payAmount: history.paidAmount }),
    };
  }

  note(what: string): void {
    this.log.push(`  +${((Date.now() - this.started) / 1000).toFixed(1)}s ${what}`);
  }

  async start(): Promise<void> {
    const { stack } = this.ctx;
    stack.simulator.plan(this.ids.donationId, this.plan);
    const response = await postDonationUntilAccepted(
      stack.apiUrl,
      this.ids.key,
      donationBody(this.ids.campaignId, this.history.amount),
    );
    this.note(`POST /v1/donations → ${response.status}`);
    if (response.status >= 300)
      throw new Error(`the donation was refused: ${await response.text()}`);
    const payment = stack.simulator.paymentByReference(this.ids.donationId);
    if (!payment) throw new Error('the donation has no payment at the simulator');
    this.payment = payment;
    this.ids.providerReference = payment.id;
  }

  async step(step: HistoryStep, at: number): Promise<void> {
    const before = this.model.view();
    this.model.apply(step, at);
    this.note(`${at}. ${describeStep(step)}`);
    const { stack } = this.ctx;
    const paymentId = this.paymentId();
    switch (step.kind) {
      case 'payment': {
        const moved = await this.call<SimulatorPayment>(paymentMovePath(paymentId, step.to));
        this.notified.set(at, { objectId: moved.id, status: moved.status });
        return;
      }
      case 'deadline':
        if (before.payment === 'pending') {
          await waitForStatusChange(stack, this.ids.donationId, this.waitMs());
        } else {
          await waitForDeadlineTimer(stack, this.ids.donationId, this.waitMs());
        }
        return;
      case 'horizon':
        await waitForStatusChange(stack, this.ids.donationId, this.waitMs());
        return;
      case 'refund': {
        this.replan(refundPlans[step.start]);
        const refund = await this.call<{ id: string; status: string }>(
          `/test/payments/${paymentId}/refunds`,
          { amount: step.amount },
        );
        this.ids.names.set(step.refund, refund.id);
        this.notified.set(at, { objectId: refund.id, status: finalRefundStatus(step.start) });
        return;
      }
      case 'operator-refund': {
        this.replan(refundPlans[step.start]);
        const body = JSON.stringify({ amount: step.amount, reason: `model ${step.refund}` });
        // Operators' keys are scoped to the route, not the donation: unique per case.
        const key = `${this.ids.key}-${step.requestKey}`;
        this.operatorRequests.set(step.refund, { key, body });
        await this.operatorRefund(step.refund);
        const known = new Set(this.ids.names.values());
        const refundId = await newRefund(stack.simulator, paymentId, known, this.waitMs());
        this.ids.names.set(step.refund, refundId);
        this.notified.set(at, { objectId: refundId, status: finalRefundStatus(step.start) });
        return;
      }
      case 'operator-refund-retry':
        await this.operatorRefund(step.refund);
        return;
      case 'refund-update': {
        const action = step.to === 'succeeded' ? 'succeed' : 'fail';
        const refund = await this.call<{ id: string; status: string }>(
          `/test/refunds/${this.named(step.refund)}/${action}`,
        );
        this.notified.set(at, { objectId: refund.id, status: refund.status });
        return;
      }
      case 'dispute': {
        const dispute = await this.call<{ id: string; status: string }>(
          `/test/payments/${paymentId}/disputes`,
          { amount: step.amount },
        );
        this.ids.names.set(step.dispute, dispute.id);
        this.notified.set(at, { objectId: dispute.id, status: dispute.status });
        return;
      }
      case 'dispute-update': {
        const action = step.to === 'won' ? 'win' : 'lose';
        const dispute = await this.call<{ id: string; status: string }>(
          `/test/disputes/${this.named(step.dispute)}/${action}`,
        );
        this.notified.set(at, { objectId: dispute.id, status: dispute.status });
        return;
      }
      case 'redeliver':
        await this.redeliver(step.step, step.mode);
        return;
      case 'reset':
        this.note(`   ${await resetDonationWorkflow(stack, this.ids.donationId, step.to)}`);
        return;
      case 'kill-worker':
        await this.ctx.restartWorker();
        return;
      case 'settle':
        await waitUntilQuiet(this.ctx, this.ids, this.waitMs());
        return;
    }
  }

  private async redeliver(of: number, mode: 'duplicate' | 'stale'): Promise<void> {
    const target = this.notified.get(of);
    if (!target) throw new Error(`step ${of} notified nothing`);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const webhook = this.ctx.recorder.find(target.objectId, target.status);
      if (webhook) {
        this.note(
          `   redelivered ${webhook.type} ${webhook.status}: ${await this.ctx.recorder.redeliver(webhook, mode)}`,
        );
        return;
      }
      if (Date.now() > deadline)
        throw new Error(`the simulator never sent the notification of step ${of}`);
      await sleep(100);
    }
  }

  private async operatorRefund(name: string): Promise<void> {
    const request = this.operatorRequests.get(name);
    if (!request) throw new Error(`no operator refund ${name}`);
    const { status, text } = await postOperatorRefund(
      this.ctx.stack.apiUrl,
      this.ids.donationId,
      request,
    );
    this.note(`   POST …/refunds → ${status} ${text.slice(0, 120)}`);
    if (status !== 202) throw new Error(`the operator's refund was refused: ${status} ${text}`);
  }

  private call<T>(path: string, body: object = {}): Promise<T> {
    return control<T>(this.ctx.stack.simulatorUrl, path, body);
  }

  private replan(change: Partial<PaymentPlan>): void {
    this.plan = { ...this.plan, refundOutcome: undefined, refundSettleMs: undefined, ...change };
    this.ctx.stack.simulator.plan(this.ids.donationId, this.plan);
  }

  private named(name: string): string {
    const id = this.ids.names.get(name);
    if (!id) throw new Error(`${name} was never made`);
    return id;
  }

  private paymentId(): string {
    if (!this.payment) throw new Error('no payment yet');
    return this.payment.id;
  }

  /** Long enough for a deadline, a horizon and a reset's rerun under a contended machine. */
  waitMs(): number {
    return (this.ctx.paymentTimeoutSeconds * 2 + this.ctx.settleHorizonSeconds) * 1_000 + 60_000;
  }
}

function finalRefundStatus(start: RefundStart): string {
  return start === 'denied' ? 'failed' : start;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs one history end to end and says how the stack and the model differ, if they do. */
export async function runCase(ctx: DriverContext, history: History): Promise<CaseResult> {
  const expected = expectedMoney(history);
  const run = new CaseRun(ctx, history, await createCampaign(ctx.stack.db));
  let problems: string[];
  let actual = 'not observed';
  try {
    await run.start();
    for (const [at, step] of history.steps.entries()) await run.step(step, at);
    await waitUntilQuiet(ctx, run.ids, run.waitMs());
    run.note('quiet');
    const observed = await observe(ctx, run.ids);
    actual = JSON.stringify(observed, null, 2);
    problems = compare(expected, observed, ctx, run.ids);
  } catch (error) {
    problems = [
      `the case could not run: ${error instanceof Error ? error.message : String(error)}`,
    ];
  }
  const debug =
    problems.length > 0
      ? await debugLines(ctx, run.ids.donationId).catch((e: unknown) => [
          `(no debug: ${String(e)})`,
        ])
      : [];
  const report = [
    describeHistory(history),
    `donation ${run.ids.donationId}, payment ${run.ids.providerReference ?? '?'}, names ${JSON.stringify(Object.fromEntries(run.ids.names))}`,
    `expected: ${JSON.stringify(expected, null, 2)}`,
    `actual: ${actual}`,
    'what the driver did:',
    ...run.log,
    ...(debug.length > 0 ? ['debug (MONEY_DEBUG):', ...debug.map((l) => `  ${l}`)] : []),
    'problems:',
    ...problems.map((p) => `  - ${p}`),
  ].join('\n');
  return { history, donationId: run.ids.donationId, problems, report };
}
