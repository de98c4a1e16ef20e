import type { PostedEntry } from '../../src/ledger/ledger-repository';
import { lackingReversals } from '../../src/reconciliation/provider-truth';
import type { PaymentSnapshot } from '../../workflows/contracts';

const at = '2026-12-02T00:00:00.000Z';
const snapshot = (over: Partial<PaymentSnapshot>): PaymentSnapshot => ({
  providerReference: 'pi_1',
  status: 'PAID',
  amount: 40_000,
  currency: 'IDR',
  refunds: [],
  disputes: [],
  ...over,
});
const ids = (events: ReturnType<typeof lackingReversals>) =>
  events.map((e) => `${e.kind === 'refund' ? e.refundId : e.disputeId}:${e.status}`);

describe('lackingReversals: what the provider shows and the ledger does not', () => {
  it('follows a succeeded refund not posted, and leaves one posted alone', () => {
    const truth = snapshot({
      refunds: [
        { refundId: 're_1', status: 'SUCCEEDED', amount: 10_000 },
        { refundId: 're_2', status: 'SUCCEEDED', amount: 5_000 },
      ],
    });
    const posted: PostedEntry[] = [{ entryType: 'REFUND', externalRef: 're_1' }];
    const events = lackingReversals(truth, posted, at);
    expect(ids(events)).toEqual(['re_2:SUCCEEDED']);
    expect(events[0]).toMatchObject({
      kind: 'refund',
      providerReference: 'pi_1',
      amount: 5_000,
      currency: 'IDR',
      eventKey: 'truth:re_2:SUCCEEDED',
      occurredAt: at,
    });
  });

  it('follows a failed refund only when its money was posted and not given back', () => {
    const truth = snapshot({
      refunds: [
        { refundId: 're_posted', status: 'FAILED', amount: 1_000 },
        { refundId: 're_undone', status: 'FAILED', amount: 1_000 },
        { refundId: 're_never', status: 'FAILED', amount: 1_000 },
        { refundId: 're_wait', status: 'PENDING', amount: 1_000 },
      ],
    });
    const posted: PostedEntry[] = [
      { entryType: 'REFUND', externalRef: 're_posted' },
      { entryType: 'REFUND', externalRef: 're_undone' },
      { entryType: 'REFUND_REVERSAL', externalRef: 're_undone' },
    ];
    expect(ids(lackingReversals(truth, posted, at))).toEqual([
      're_posted:FAILED',
      're_wait:PENDING',
    ]);
  });

  it('follows disputes by what their state needs posted, keeping an unstated amount unstated', () => {
    const truth = snapshot({
      disputes: [
        { disputeId: 'dp_open', status: 'OPEN', amount: 40_000 },
        { disputeId: 'dp_taken', status: 'LOST', amount: 40_000 },
        { disputeId: 'dp_won', status: 'WON', amount: 40_000 },
        { disputeId: 'dp_back', status: 'WON', amount: 40_000 },
        { disputeId: 'order-chargeback', status: 'OPEN', amount: 0, amountUnstated: true },
      ],
    });
    const posted: PostedEntry[] = [
      { entryType: 'CHARGEBACK', externalRef: 'dp_taken' },
      { entryType: 'CHARGEBACK', externalRef: 'dp_won' },
      { entryType: 'CHARGEBACK', externalRef: 'dp_back' },
      { entryType: 'CHARGEBACK_REVERSAL', externalRef: 'dp_back' },
    ];
    const events = lackingReversals(truth, posted, at);
    expect(ids(events)).toEqual(['dp_open:OPEN', 'dp_won:WON', 'order-chargeback:OPEN']);
    expect(events[2]).toMatchObject({ amountUnstated: true });
    expect(events[0]).not.toHaveProperty('amountUnstated');
  });

  it('follows nothing when the ledger already shows the provider record', () => {
    const truth = snapshot({
      refunds: [{ refundId: 're_1', status: 'SUCCEEDED', amount: 10_000 }],
      disputes: [{ disputeId: 'dp_1', status: 'LOST', amount: 30_000 }],
    });
    const posted: PostedEntry[] = [
      { entryType: 'REFUND', externalRef: 're_1' },
      { entryType: 'CHARGEBACK', externalRef: 'dp_1' },
    ];
    expect(lackingReversals(truth, posted, at)).toEqual([]);
  });
});
