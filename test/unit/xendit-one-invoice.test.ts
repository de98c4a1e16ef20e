import { keptInvoice } from '../../src/providers/xendit/xendit-invoices';
import type { XenditInvoice } from '../../src/providers/xendit/xendit-protocol';
import { startXenditWithAdapter, xenditAuth } from '../support/standins/xendit-with-adapter';

let stand: Awaited<ReturnType<typeof startXenditWithAdapter>>;
let n = 0;

beforeEach(async () => {
  stand = await startXenditWithAdapter();
});
afterEach(async () => {
  jest.restoreAllMocks();
  await stand.close();
});

const create = (reference: string) =>
  stand.adapter.createPayment({
    idempotencyKey: `${reference}-create`,
    donationId: reference,
    amount: 50_000,
    currency: 'IDR',
    method: 'card',
    description: 'Donation',
  });
/** An invoice made outside this caller for the same external_id, as another attempt does. */
const duplicate = async (reference: string) => {
  const answer = await fetch(`${stand.xendit.url}/v2/invoices`, {
    method: 'POST',
    headers: { ...xenditAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ external_id: reference, amount: 50_000, currency: 'IDR' }),
  });
  return ((await answer.json()) as { id: string }).id;
};
const live = (reference: string) =>
  stand.xendit
    .invoices(reference)
    .filter((i) => i.status === 'PENDING')
    .map((i) => i.id);

/**
 * Holds the first `count` invoice lists until Xendit has answered all of them, so every caller
 * sees none and creates: the overlap of two attempts, made certain.
 */
function overlapFirstLists(count: number) {
  const real = globalThis.fetch;
  const held: (() => void)[] = [];
  jest.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const answer = await real(input, init);
    const url = input instanceof Request ? input.url : String(input);
    if (init?.method === 'GET' && url.includes('/v2/invoices?') && held.length < count) {
      await new Promise<void>((resolve) => {
        held.push(resolve);
        if (held.length === count) for (const release of held) release();
      });
    }
    return answer;
  });
}

describe('Xendit: one invoice per donation, whatever overlaps (issue 22 item 11)', () => {
  test('two overlapping createPayment calls answer the same invoice; one stays payable', async () => {
    const reference = `don-one-${++n}`;
    overlapFirstLists(2);
    const [first, second] = await Promise.all([create(reference), create(reference)]);
    expect(stand.xendit.invoices(reference)).toHaveLength(2);
    expect(second.providerReference).toBe(first.providerReference);
    expect(live(reference)).toEqual([first.providerReference]);
    // The earliest made is the one kept; the other is expired through the documented endpoint.
    expect(first.providerReference).toBe(stand.xendit.invoices(reference)[0]?.id);
    expect(
      stand.xendit.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/expire!')),
    ).not.toEqual([]);
  });

  test('a duplicate made after the first answer is expired; the first is kept', async () => {
    const reference = `don-one-${++n}`;
    const first = await create(reference);
    await duplicate(reference);
    const again = await create(reference);
    expect(again.providerReference).toBe(first.providerReference);
    expect(live(reference)).toEqual([first.providerReference]);
  });

  test('a paid duplicate is kept over an earlier pending one', async () => {
    const reference = `don-one-${++n}`;
    const first = await create(reference);
    const paid = await duplicate(reference);
    stand.xendit.pay(paid, 'CREDIT_CARD');
    const again = await create(reference);
    expect(again).toMatchObject({ providerReference: paid, status: 'PAID' });
    expect(live(reference)).toEqual([]);
    expect(
      stand.xendit.invoices(reference).find((i) => i.id === first.providerReference)?.status,
    ).toBe('EXPIRED');
  });
});

describe('keptInvoice', () => {
  const invoice = (id: string, status: string, created: string): XenditInvoice => ({
    id,
    external_id: 'don',
    status,
    amount: 1,
    currency: 'IDR',
    created,
  });

  test('paid or settled first, else the earliest made; ties keep the list order', () => {
    const a = invoice('a', 'PENDING', '2026-01-01T00:00:01.000Z');
    const b = invoice('b', 'PENDING', '2026-01-01T00:00:00.000Z');
    const c = invoice('c', 'SETTLED', '2026-01-01T00:00:02.000Z');
    const d = invoice('d', 'EXPIRED', '2026-01-01T00:00:00.000Z');
    expect(keptInvoice([a, b])?.id).toBe('b');
    expect(keptInvoice([a, b, c])?.id).toBe('c');
    expect(keptInvoice([b, d])?.id).toBe('b');
    expect(keptInvoice([d, b])?.id).toBe('d');
    expect(keptInvoice([])).toBeUndefined();
  });
});
