/**
 * What the money driver needs of one provider: its own controls for each generated step (the
 * donor, the bank, its dashboard), its notifications, and what it holds for the comparison.
 * The simulator and each stand-in implement it; the steps around them (the API, deadlines,
 * resets, a killed worker) are the same for all (money-driver.ts).
 */
import type { History, HistoryStep, ProviderProfile } from './history';
import type { CaseIds } from './case-ids';

/** The steps a provider performs itself. */
export type ProviderStep = Extract<
  HistoryStep,
  {
    kind:
      | 'payment'
      | 'payment-reversed'
      | 'refund'
      | 'refund-update'
      | 'dispute'
      | 'dispute-update'
      | 'provider-fault';
  }
>;
export type OperatorRefundStep = Extract<HistoryStep, { kind: 'operator-refund' }>;

/** One case's side of the provider. */
export interface CaseProvider {
  /** Before the donation is posted (the simulator's plan). */
  beforeDonation(): void;
  /** The payment galang created for the donation: its reference as galang stores it. */
  payment(timeoutMs: number): Promise<string>;
  /** Called as step `at` begins, so a later redelivery finds what the step sent. */
  stepStarts(at: number): void;
  /**
   * Performs a provider step; a refund's or dispute's id goes into `ids.names` (also the one
   * galang makes of a late payment, waited for up to `timeoutMs`).
   */
  perform(step: ProviderStep, at: number, timeoutMs: number): Promise<void>;
  /** Arranges how the provider will answer the operator's refund, before it is posted. */
  beforeOperatorRefund(step: OperatorRefundStep): void;
  /** Finds the refund galang made and moves it to the step's start; answers its id. */
  afterOperatorRefund(
    step: OperatorRefundStep,
    at: number,
    timeoutMs: number,
    watch: Watch,
  ): Promise<string>;
  /** Delivers what step `of` notified again; answers a line for the log. */
  redeliver(of: number, mode: 'duplicate' | 'stale'): Promise<string>;
}

export interface ProviderDriver {
  readonly profile: ProviderProfile;
  /** The galang payment method its donations use. */
  readonly method: string;
  forCase(ids: CaseIds, history: History): CaseProvider;
  /** Notifications about the case still on their way to the API. */
  inFlight(ids: CaseIds): number;
  /** A fingerprint of the provider's state of the case (quiet means unchanged). */
  state(ids: CaseIds): unknown;
  /** Charges made at the provider for the donation (exactly one is right). */
  charges(ids: CaseIds): number;
  /** Distinct payments the provider notified about (only the one galang created is right). */
  payments(ids: CaseIds): string[];
  /** Refunds the provider holds (or refused) for the payment: one per refund the history made. */
  refunds(ids: CaseIds): number;
  /** Refunds still pending at the provider: their reversals wait, idle. */
  pendingRefunds(ids: CaseIds): string[];
  /** Notifications the API answered other than 2xx. */
  refused(ids: CaseIds): { status: number; body: string }[];
}

/** Set `done` to stop a poll whose answer nobody waits for any more. */
export interface Watch {
  done: boolean;
}

/** Polls `find` until it answers, or throws `what` when the time is up or the watch is done. */
export async function poll<T>(
  find: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  what: string,
  watch: Watch = { done: false },
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > deadline || watch.done) throw new Error(what);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
