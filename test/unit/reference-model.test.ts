import type { History, HistoryStep } from '../money/history';
import { describeHistory } from '../money/history';
import { caseSeed, generateHistory, mulberry32 } from '../money/history-generator';
import type { ExpectedEntry } from '../money/expected';
import { ImpossibleHistory, sortEntries } from '../money/expected';
import { MoneyModel, expectedMoney } from '../money/reference-model';

const history = (steps: HistoryStep[], extra: Partial<History> = {}): History => ({
  seed: 1,
  index: 0,
  profile: 'simulator',
  amount: 50_000,
  refundable: true,
  steps,
  ...extra,
});

const paid: HistoryStep = { kind: 'payment', to: 'settled' };
const donation: ExpectedEntry = { type: 'DONATION', ref: 'payment', amount: 50_000 };

describe('the reference model: the payment', () => {
  it('credits a payment settled in time', () => {
    expect(expectedMoney(history([paid]))).toEqual({
      status: 'CONFIRMED',
      entries: [donation],
      net: 50_000,
      campaign: { amount: 50_000, count: 1 },
      reversals: {},
    });
  });

  it.each([
    ['declined', 'FAILED'],
    ['canceled', 'CANCELED'],
    ['expired', 'EXPIRED'],
  ] as const)('ends a %s payment %s, with no money', (to, status) => {
    expect(expectedMoney(history([{ kind: 'payment', to }]))).toMatchObject({
      status,
      entries: [],
      campaign: { amount: 0, count: 0 },
    });
  });

  it('never loses a success: PAID after a decline, after expiry, after the horizon', () => {
    const late = [
      [{ kind: 'payment', to: 'declined' }, paid],
      [{ kind: 'deadline' }, paid],
      [{ kind: 'payment', to: 'processing' }, { kind: 'deadline' }, { kind: 'horizon' }, paid],
      [{ kind: 'payment', to: 'processing' }, { kind: 'deadline' }, paid],
    ] satisfies HistoryStep[][];
    for (const steps of late) {
      expect(expectedMoney(history(steps))).toMatchObject({
        status: 'CONFIRMED',
        entries: [donation],
      });
    }
  });

  it('expires at the deadline when the cancel is accepted', () => {
    expect(expectedMoney(history([{ kind: 'deadline' }])).status).toBe('EXPIRED');
  });

  it('keeps checking a processing payment past the deadline, then asks for review', () => {
    const processing: HistoryStep[] = [{ kind: 'payment', to: 'processing' }, { kind: 'deadline' }];
    const model = new MoneyModel({ amount: 50_000, refundable: true });
    processing.forEach((step, i) => {
      model.apply(step, i);
    });
    expect(model.view()).toMatchObject({ phase: 'horizon', status: 'AWAITING_PAYMENT' });
    expect(expectedMoney(history([...processing, { kind: 'horizon' }])).status).toBe(
      'NEEDS_REVIEW',
    );
    expect(
      expectedMoney(history([...processing, { kind: 'payment', to: 'declined' }])).status,
    ).toBe('FAILED');
  });

  it('credits nothing when the donor paid another amount, in time or late', () => {
    for (const steps of [[paid], [{ kind: 'deadline' }, paid]] satisfies HistoryStep[][]) {
      expect(expectedMoney(history(steps, { paidAmount: 49_000 }))).toMatchObject({
        status: 'NEEDS_REVIEW',
        entries: [],
      });
    }
  });
});

describe('the reference model: a campaign closed mid-history', () => {
  const close: HistoryStep = { kind: 'close-campaign' };
  const lateRefunded = (start: 'pending' | 'succeeded' | 'denied'): HistoryStep => ({
    kind: 'payment',
    to: 'settled',
    lateRefund: start,
  });

  it('still credits a payment of a donation started before the close', () => {
    for (const steps of [
      [close, paid],
      [{ kind: 'payment', to: 'processing' }, close, { kind: 'deadline' }, paid],
    ] satisfies HistoryStep[][]) {
      expect(expectedMoney(history(steps))).toMatchObject({
        status: 'CONFIRMED',
        entries: [donation],
        campaign: { amount: 50_000, count: 1 },
      });
    }
  });

  it('credits a late payment, then refunds all of it: the total ends where it was', () => {
    const expected = expectedMoney(
      history([{ kind: 'deadline' }, close, lateRefunded('succeeded')]),
    );
    expect(expected).toEqual({
      status: 'REFUNDED',
      entries: [donation, { type: 'REFUND', ref: 'late', amount: -50_000 }],
      net: 0,
      campaign: { amount: 0, count: 0 },
      reversals: { late: 'posted' },
    });
    const pending: HistoryStep[] = [
      { kind: 'payment', to: 'expired' },
      close,
      lateRefunded('pending'),
    ];
    expect(expectedMoney(history(pending))).toMatchObject({ status: 'CONFIRMED', net: 50_000 });
    const ended = [...pending, { kind: 'refund-update', refund: 'late', to: 'succeeded' } as const];
    expect(expectedMoney(history(ended))).toMatchObject({ status: 'REFUNDED', net: 0 });
  });

  it('holds in review a late payment whose refund the provider denied or failed', () => {
    const held = {
      status: 'NEEDS_REVIEW',
      entries: [donation],
      net: 50_000,
      campaign: { amount: 50_000, count: 1 },
      reversals: { late: 'no-money-moved' },
    };
    expect(expectedMoney(history([{ kind: 'deadline' }, close, lateRefunded('denied')]))).toEqual(
      held,
    );
    const failed: HistoryStep[] = [
      { kind: 'payment', to: 'expired' },
      close,
      lateRefunded('pending'),
      { kind: 'refund-update', refund: 'late', to: 'failed' },
    ];
    expect(expectedMoney(history(failed))).toEqual(held);
    // The next money the provider moves derives the status from the net again.
    const after = [
      ...failed,
      { kind: 'refund', refund: 'r1', amount: 50_000, start: 'succeeded' } as const,
    ];
    expect(expectedMoney(history(after))).toMatchObject({ status: 'REFUNDED', net: 0 });
  });

  it('holds a late payment it cannot refund for review, crediting nothing', () => {
    const steps: HistoryStep[] = [{ kind: 'payment', to: 'declined' }, close, paid];
    expect(expectedMoney(history(steps, { refundable: false }))).toEqual({
      status: 'NEEDS_REVIEW',
      entries: [],
      net: 0,
      campaign: { amount: 0, count: 0 },
      reversals: {},
    });
  });

  it('credits a late payment that came before the close, and one of another amount never', () => {
    expect(expectedMoney(history([{ kind: 'deadline' }, paid, close])).status).toBe('CONFIRMED');
    expect(
      expectedMoney(history([{ kind: 'deadline' }, close, paid], { paidAmount: 49_000 })),
    ).toMatchObject({ status: 'NEEDS_REVIEW', entries: [] });
  });

  it.each<[string, HistoryStep[], Partial<History>]>([
    [
      'a late payment to a closed campaign left unrefunded',
      [{ kind: 'deadline' }, close, paid],
      {},
    ],
    ['a refund of a payment in time', [close, lateRefunded('pending')], {}],
    [
      'a refund of a method that cannot be refunded',
      [{ kind: 'deadline' }, close, lateRefunded('pending')],
      { refundable: false },
    ],
  ])('refuses %s', (_what, steps, extra) => {
    expect(() => expectedMoney(history(steps, extra))).toThrow(ImpossibleHistory);
  });
});

describe('the reference model: reversals', () => {
  it('posts each partial refund its own amount and derives the status from the net', () => {
    const expected = expectedMoney(
      history([
        paid,
        { kind: 'refund', refund: 'r1', amount: 15_000, start: 'succeeded' },
        { kind: 'refund', refund: 'r2', amount: 10_000, start: 'pending' },
        { kind: 'refund-update', refund: 'r2', to: 'failed' },
        { kind: 'refund', refund: 'r3', amount: 5_000, start: 'denied' },
      ]),
    );
    expect(expected).toMatchObject({
      status: 'PARTIALLY_REFUNDED',
      entries: [donation, { type: 'REFUND', ref: 'r1', amount: -15_000 }],
      campaign: { amount: 35_000, count: 1 },
      reversals: { r1: 'posted', r2: 'no-money-moved', r3: 'no-money-moved' },
    });
  });

  it('is REFUNDED once the refunds reach the amount, and counts the donation out', () => {
    const expected = expectedMoney(
      history([
        paid,
        { kind: 'refund', refund: 'r1', amount: 20_000, start: 'pending' },
        {
          kind: 'operator-refund',
          refund: 'op1',
          amount: 30_000,
          start: 'succeeded',
          requestKey: 'k',
        },
        { kind: 'refund-update', refund: 'r1', to: 'succeeded' },
      ]),
    );
    expect(expected).toMatchObject({
      status: 'REFUNDED',
      net: 0,
      campaign: { amount: 0, count: 0 },
    });
    expect(expected.entries).toHaveLength(3);
  });

  it('gives a refund that failed after succeeding back with a REFUND_REVERSAL', () => {
    const expected = expectedMoney(
      history([
        paid,
        { kind: 'refund', refund: 'r1', amount: 50_000, start: 'succeeded' },
        { kind: 'refund-update', refund: 'r1', to: 'failed' },
      ]),
    );
    expect(expected).toMatchObject({ status: 'CONFIRMED', net: 50_000 });
    expect(sortEntries(expected.entries)).toEqual(
      sortEntries([
        donation,
        { type: 'REFUND', ref: 'r1', amount: -50_000 },
        { type: 'REFUND_REVERSAL', ref: 'r1', amount: 50_000 },
      ]),
    );
  });

  it('charges back at OPEN, keeps it when LOST and gives it back when WON', () => {
    const open: HistoryStep[] = [paid, { kind: 'dispute', dispute: 'd1', amount: 50_000 }];
    const lost = expectedMoney(
      history([...open, { kind: 'dispute-update', dispute: 'd1', to: 'lost' }]),
    );
    expect(lost).toMatchObject({
      status: 'CHARGED_BACK',
      entries: [donation, { type: 'CHARGEBACK', ref: 'd1', amount: -50_000 }],
      campaign: { amount: 0, count: 0 },
    });
    const won = expectedMoney(
      history([...open, { kind: 'dispute-update', dispute: 'd1', to: 'won' }]),
    );
    expect(won).toMatchObject({ status: 'CONFIRMED', campaign: { amount: 50_000, count: 1 } });
    expect(won.entries.map((e) => e.type)).toEqual([
      'DONATION',
      'CHARGEBACK',
      'CHARGEBACK_REVERSAL',
    ]);
  });

  it('is CHARGED_BACK, not REFUNDED, when a dispute takes what a refund left', () => {
    const expected = expectedMoney(
      history([
        paid,
        { kind: 'refund', refund: 'r1', amount: 20_000, start: 'succeeded' },
        { kind: 'dispute', dispute: 'd1', amount: 30_000 },
        { kind: 'dispute-update', dispute: 'd1', to: 'lost' },
      ]),
    );
    expect(expected).toMatchObject({ status: 'CHARGED_BACK', net: 0 });
  });

  it('waits for the credit: a refund before the PAID arrives posts after it', () => {
    // The provider settled, refunded at once, and only then did galang hear of the payment.
    const expected = expectedMoney(
      history([
        { kind: 'deadline' },
        paid,
        { kind: 'refund', refund: 'r1', amount: 10_000, start: 'succeeded' },
      ]),
    );
    expect(expected).toMatchObject({ status: 'PARTIALLY_REFUNDED', net: 40_000 });
  });

  it('posts nothing for money that was never credited: the reversal needs review', () => {
    const expected = expectedMoney(
      history([paid, { kind: 'refund', refund: 'r1', amount: 10_000, start: 'succeeded' }], {
        paidAmount: 49_000,
      }),
    );
    expect(expected).toMatchObject({
      status: 'NEEDS_REVIEW',
      entries: [],
      reversals: { r1: 'needs-review' },
    });
  });

  it('is unmoved by duplicates, stale notifications, resets and a killed worker', () => {
    const steps: HistoryStep[] = [
      paid,
      { kind: 'refund', refund: 'r1', amount: 10_000, start: 'pending' },
      { kind: 'refund-update', refund: 'r1', to: 'succeeded' },
    ];
    const noisy: HistoryStep[] = [
      { kind: 'reset', to: 'first-task' },
      paid,
      { kind: 'redeliver', step: 1, mode: 'duplicate' },
      { kind: 'kill-worker' },
      { kind: 'refund', refund: 'r1', amount: 10_000, start: 'pending' },
      { kind: 'refund-update', refund: 'r1', to: 'succeeded' },
      { kind: 'redeliver', step: 4, mode: 'stale' },
      { kind: 'settle' },
      { kind: 'reset', to: 'last-task' },
    ];
    expect(expectedMoney(history(noisy))).toEqual(expectedMoney(history(steps)));
  });
});

describe('the reference model refuses histories no provider could produce', () => {
  it.each<[string, HistoryStep[]]>([
    [
      'a refund of an unpaid payment',
      [{ kind: 'refund', refund: 'r1', amount: 1, start: 'pending' }],
    ],
    [
      'more refunded than paid',
      [paid, { kind: 'refund', refund: 'r1', amount: 50_001, start: 'pending' }],
    ],
    ['a settled payment declined', [paid, { kind: 'payment', to: 'declined' }]],
    ['a deadline after the decision', [paid, { kind: 'deadline' }]],
    ['a horizon without a refused cancel', [{ kind: 'deadline' }, { kind: 'horizon' }]],
    [
      'an ended refund ending again',
      [
        paid,
        { kind: 'refund', refund: 'r1', amount: 1, start: 'denied' },
        { kind: 'refund-update', refund: 'r1', to: 'succeeded' },
      ],
    ],
    [
      'an operator refund of an uncredited donation',
      [{ kind: 'operator-refund', refund: 'op1', amount: 1, start: 'pending', requestKey: 'k' }],
    ],
    [
      'a refund of a disputed payment',
      [
        paid,
        { kind: 'dispute', dispute: 'd1', amount: 10 },
        { kind: 'refund', refund: 'r1', amount: 1, start: 'pending' },
      ],
    ],
  ])('%s', (_what, steps) => {
    expect(() => expectedMoney(history(steps))).toThrow(ImpossibleHistory);
  });
});

describe('the history generator', () => {
  it('is mulberry32: the same seed gives the same numbers', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const first = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(caseSeed(7, 0)).not.toBe(caseSeed(7, 1));
  });

  it('regenerates a case from its seed and index', () => {
    expect(generateHistory(123, 4, 'simulator')).toEqual(generateHistory(123, 4, 'simulator'));
    expect(describeHistory(generateHistory(123, 4, 'simulator'))).toContain('case 4 of seed 123');
  });

  it('closes campaigns mid-history: a late payment is refunded where it can be, else held', () => {
    const seen = { refunded: 0, held: 0, refundFailed: 0 };
    const moves = ['payment', 'refund', 'operator-refund', 'refund-update', 'dispute'];
    for (let index = 0; index < 600; index++) {
      for (const profile of ['simulator', 'simulator-va'] as const) {
        const generated = generateHistory(2024, index, profile);
        const model = new MoneyModel(generated);
        let held = false;
        let refundFailed = false;
        for (const [i, step] of generated.steps.entries()) {
          const before = model.view();
          const late =
            step.kind === 'payment' && step.to === 'settled' && before.phase === 'closed';
          if (late && !before.credited && !before.campaignOpen && !generated.refundable)
            held = true;
          model.apply(step, i);
          const fails =
            (step.kind === 'payment' && step.lateRefund === 'denied') ||
            (step.kind === 'refund-update' && step.refund === 'late' && step.to === 'failed');
          if (fails) {
            // Credited and not given back: held for an operator, and galang goes quiet first.
            refundFailed = true;
            expect(model.view().status).toBe('NEEDS_REVIEW');
            const rest = generated.steps.slice(i + 1);
            const next = rest.findIndex((later) => moves.includes(later.kind));
            const gap = next < 0 ? rest : rest.slice(0, next);
            expect(gap).toContainEqual({ kind: 'settle' });
          }
        }
        const expected = model.result();
        if (refundFailed) {
          seen.refundFailed++;
          expect(expected.reversals.late).toBe('no-money-moved');
        } else if (generated.steps.some((step) => step.kind === 'payment' && step.lateRefund)) {
          seen.refunded++;
          expect(expected.entries).toContainEqual({
            type: 'REFUND',
            ref: 'late',
            amount: -generated.amount,
          });
        }
        if (held) {
          seen.held++;
          expect(expected).toMatchObject({ status: 'NEEDS_REVIEW', entries: [] });
        }
      }
    }
    expect(seen.refunded).toBeGreaterThan(10);
    expect(seen.held).toBeGreaterThan(10);
    expect(seen.refundFailed).toBeGreaterThan(10);
  });

  it('makes valid, finished histories that reach every step and every ending', () => {
    const kinds = new Set<string>();
    const statuses = new Set<string>();
    const entryTypes = new Set<string>();
    for (let index = 0; index < 3_000; index++) {
      const generated = generateHistory(2024, index, 'simulator-verify');
      const model = new MoneyModel(generated);
      generated.steps.forEach((step, i) => {
        model.apply(step, i);
        kinds.add(step.kind === 'payment' ? `payment:${step.to}` : step.kind);
      });
      const view = model.view();
      expect(view.pendingRefunds).toEqual([]);
      expect(view.openDisputes).toEqual([]);
      expect(view.phase).toBe('closed');
      const expected = model.result();
      statuses.add(expected.status);
      for (const entry of expected.entries) entryTypes.add(entry.type);
      // Below zero only when a dispute took more than refunds left: then it waits for review.
      if (expected.net < 0) expect(expected.status).toBe('NEEDS_REVIEW');
      expect(expected.net).toBeGreaterThanOrEqual(-generated.amount);
      expect(expected.net).toBeLessThanOrEqual(generated.amount);
    }
    expect([...kinds].sort()).toEqual(
      [
        'deadline',
        'dispute',
        'dispute-update',
        'horizon',
        'kill-worker',
        'close-campaign',
        'operator-refund',
        'operator-refund-retry',
        'payment:canceled',
        'payment:declined',
        'payment:expired',
        'payment:processing',
        'payment:settled',
        'redeliver',
        'refund',
        'refund-update',
        'reset',
        'settle',
      ].sort(),
    );
    expect([...statuses].sort()).toEqual(
      [
        'CANCELED',
        'CHARGED_BACK',
        'CONFIRMED',
        'EXPIRED',
        'FAILED',
        'NEEDS_REVIEW',
        'PARTIALLY_REFUNDED',
        'REFUNDED',
      ].sort(),
    );
    expect([...entryTypes].sort()).toEqual(
      ['CHARGEBACK', 'CHARGEBACK_REVERSAL', 'DONATION', 'REFUND', 'REFUND_REVERSAL'].sort(),
    );
  });
});
