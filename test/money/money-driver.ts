/**
 * Applies one generated history to the real stack: the donation through the API, the provider's
 * moves through that provider's own controls (provider-driver.ts: the simulator's test routes
 * or a stand-in's), operator refunds through the API's refund route, resets and a killed worker
 * at their points; then waits until nothing moves and compares what the stack holds with what
 * the reference model expects.
 */
import { randomUUID } from 'node:crypto';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import { clientAScope, postDonationUntilAccepted } from '../support/donations';
import { createCampaign, donationBody } from '../support/stack';
import type { History, HistoryStep } from './history';
import { describeHistory, describeStep } from './history';
import { MoneyModel, expectedMoney } from './reference-model';
import { debugLines } from './case-debug';
import { compare, observe, waitUntilQuiet } from './money-observe';
import type { CaseIds } from './case-ids';
import {
  assertHorizonOpen,
  resetDonationWorkflow,
  waitForDeadlineTimer,
  waitForStatusChange,
} from './workflow-control';
import type { DriverContext } from './driver-context';
import type { CaseProvider } from './provider-driver';
import { closeCampaign, postOperatorRefund } from './simulator-control';

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
  private readonly provider: CaseProvider;
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
    this.provider = ctx.provider.forCase(this.ids, history);
  }

  note(what: string): void {
    this.log.push(`  +${((Date.now() - this.started) / 1000).toFixed(1)}s ${what}`);
  }

  async start(): Promise<void> {
    const { stack, provider } = this.ctx;
    this.provider.beforeDonation();
    const response = await postDonationUntilAccepted(stack.apiUrl, this.ids.key, {
      ...donationBody(this.ids.campaignId, this.history.amount),
      paymentMethod: provider.method,
    });
    this.note(`POST /v1/donations → ${response.status}`);
    if (response.status >= 300)
      throw new Error(`the donation was refused: ${await response.text()}`);
    this.ids.providerReference = await this.provider.payment(this.waitMs());
  }

  async step(step: HistoryStep, at: number): Promise<void> {
    const before = this.model.view();
    this.model.apply(step, at);
    this.note(`${at}. ${describeStep(step)}`);
    this.provider.stepStarts(at);
    const { stack } = this.ctx;
    if (before.phase === 'horizon' && step.kind === 'payment') {
      await assertHorizonOpen(stack, this.ids.donationId, this.ctx.settleHorizonSeconds);
    }
    switch (step.kind) {
      case 'payment':
      case 'payment-reversed':
      case 'refund':
      case 'refund-update':
      case 'dispute':
      case 'dispute-update':
      case 'provider-fault':
        await this.provider.perform(step, at, this.waitMs());
        return;
      case 'close-campaign':
        this.note(`   ${await closeCampaign(stack.apiUrl, this.ids.campaignId)}`);
        return;
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
      case 'operator-refund': {
        this.provider.beforeOperatorRefund(step);
        const body = JSON.stringify({ amount: step.amount, reason: `model ${step.refund}` });
        // Operators' keys are scoped to the route, not the donation: unique per case.
        const key = `${this.ids.key}-${step.requestKey}`;
        this.operatorRequests.set(step.refund, { key, body });
        const workflowId = await this.operatorRefund(step.refund);
        const watch = { done: false };
        const id = await Promise.race([
          this.provider.afterOperatorRefund(step, at, this.waitMs(), watch),
          this.requestEnds(workflowId, watch),
        ]).finally(() => (watch.done = true));
        this.ids.names.set(step.refund, id);
        return;
      }
      case 'operator-refund-retry':
        await this.operatorRefund(step.refund);
        return;
      case 'redeliver':
        this.note(`   ${await this.provider.redeliver(step.step, step.mode)}`);
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

  /**
   * Rejects once the operator's refund request workflow has ended and, a little later, the
   * provider still holds no refund of it (galang gave up before asking): a fast, clear failure.
   */
  private async requestEnds(workflowId: string | undefined, watch: { done: boolean }) {
    if (workflowId === undefined) return new Promise<never>(() => undefined);
    const handle = this.ctx.stack.temporal.workflow.getHandle(workflowId);
    for (let endedAt: number | undefined; !watch.done;) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const { status } = await handle.describe().catch(() => ({ status: { name: 'UNKNOWN' } }));
      if (status.name === 'RUNNING' || status.name === 'UNKNOWN') continue;
      endedAt ??= Date.now();
      if (Date.now() - endedAt < 5_000) continue;
      const result: unknown = status.name === 'COMPLETED' ? await handle.result() : status.name;
      throw new Error(
        `the refund request ${workflowId} ended ${JSON.stringify(result)} and no refund reached the provider`,
      );
    }
    return new Promise<never>(() => undefined);
  }

  /** Posts the operator's refund; answers the request workflow's id from the 202. */
  private async operatorRefund(name: string): Promise<string | undefined> {
    const request = this.operatorRequests.get(name);
    if (!request) throw new Error(`no operator refund ${name}`);
    const { status, text } = await postOperatorRefund(
      this.ctx.stack.apiUrl,
      this.ids.donationId,
      request,
    );
    this.note(`   POST …/refunds → ${status} ${text.slice(0, 120)}`);
    if (status !== 202) throw new Error(`the operator's refund was refused: ${status} ${text}`);
    return (JSON.parse(text) as { workflowId?: string }).workflowId;
  }

  /** Long enough for a deadline, a horizon and a reset's rerun under a contended machine. */
  waitMs(): number {
    return (this.ctx.paymentTimeoutSeconds * 2 + this.ctx.settleHorizonSeconds) * 1_000 + 60_000;
  }
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
