import { isOpen } from '../../workflows/contracts';
import type { SimulatorPayment } from '../../src/providers/simulator/simulator-protocol';
import type { StackClient, StoredDonation } from '../stack/stack-client';
import type { SoakRecord } from './soak-donors';

export interface InvariantResult {
  name: string;
  ok: boolean;
  /** The first few offenders, when not ok. */
  detail: string;
}

/** What the provider holds of one donation: what the donor paid, less what came back. */
function providerNet(payment: SimulatorPayment | undefined): number {
  if (!payment || payment.status !== 'settled') return 0;
  const paid = payment.paid_amount ?? payment.amount;
  const lost = payment.disputes
    .filter((dispute) => dispute.status !== 'won')
    .reduce((sum, dispute) => sum + dispute.amount, 0);
  return paid - payment.refunded_amount - lost;
}

/** Whether every donation has ended, and no refund at the provider is still pending. */
export async function everythingEnded(client: StackClient, campaignId: string): Promise<boolean> {
  const donations = await client.donations(campaignId);
  if (donations.some((donation) => isOpen(donation.status))) return false;
  const payments = await client.allPayments();
  return !payments.some((payment) => payment.refunds.some((refund) => refund.status === 'pending'));
}

/**
 * The soak's verdict, from three records that must agree: what the load was answered, what
 * galang stored (donations, ledger, totals) and what the provider stand-in holds.
 */
export async function checkInvariants(
  client: StackClient,
  campaignId: string,
  record: SoakRecord,
): Promise<InvariantResult[]> {
  const stored = await client.donations(campaignId);
  const byId = new Map(stored.map((donation) => [donation.id, donation]));
  const payments = (await client.allPayments()).filter((payment) => byId.has(payment.reference));
  const paymentsOf = new Map<string, SimulatorPayment[]>();
  for (const payment of payments) {
    paymentsOf.set(payment.reference, [...(paymentsOf.get(payment.reference) ?? []), payment]);
  }
  const check = (name: string, offenders: string[]): InvariantResult => ({
    name,
    ok: offenders.length === 0,
    detail:
      offenders.length === 0 ? '' : `${offenders.length}: ${offenders.slice(0, 5).join('; ')}`,
  });
  const keys = [...record.keys.entries()];
  const campaign = (await client.campaign(campaignId)).body;
  const ledger = await client.ledger(campaignId);
  const moneyOff = (donation: StoredDonation) => {
    const expected = providerNet(paymentsOf.get(donation.id)?.[0]);
    return donation.net === expected
      ? []
      : [`${donation.id} ledger ${donation.net} ≠ provider ${expected}`];
  };

  return [
    check(
      'every retry of a key answered with the same donation',
      keys
        .filter(([, { ids }]) => new Set(ids).size > 1)
        .map(([key, { ids }]) => `${key}: ${ids.join(', ')}`),
    ),
    check(
      'no donation lost: every answered donation is stored, for its key and amount',
      keys.flatMap(([key, { amount, ids }]) =>
        ids
          .filter((id) => byId.get(id)?.key !== key || byId.get(id)?.amount !== amount)
          .map((id) => `${key} → ${id}`),
      ),
    ),
    check(
      'no donation the load did not ask for',
      stored.filter((donation) => !record.keys.has(donation.key)).map((donation) => donation.id),
    ),
    check(
      'every donation ended',
      stored.filter((donation) => isOpen(donation.status)).map((d) => `${d.id} ${d.status}`),
    ),
    check(
      'charged once: at most one payment at the provider per donation',
      [...paymentsOf.entries()]
        .filter(([, list]) => list.length > 1)
        .map(([id, list]) => `${id} ×${list.length}`),
    ),
    check(
      'credited once: at most one DONATION entry per donation',
      stored.filter((donation) => donation.credits > 1).map((d) => `${d.id} ×${d.credits}`),
    ),
    check('each donor’s money in the ledger = the provider’s record', stored.flatMap(moneyOff)),
    check(
      'the campaign total = its ledger',
      campaign.confirmedAmount === ledger.net && campaign.donationCount === ledger.donations
        ? []
        : [
            `total ${campaign.confirmedAmount}/${campaign.donationCount} ≠ ledger ${ledger.net}/${ledger.donations}`,
          ],
    ),
  ];
}

/**
 * What the donors met at the balancer while the load ran: a 502 or 504 is nginx failing them (a
 * node lost, or every node marked down). Fixed once the load has stopped.
 */
export function balancerInvariant(record: SoakRecord): InvariantResult {
  const offenders = [502, 504].flatMap((status) => {
    const n = record.attempts.get(status) ?? 0;
    return n === 0 ? [] : [`${status} ×${n}`];
  });
  return {
    name: 'no donor met a lost node: no 502 or 504 from the balancer',
    ok: offenders.length === 0,
    detail: offenders.join(', '),
  };
}
