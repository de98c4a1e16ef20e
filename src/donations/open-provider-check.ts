import type { DonationRepository } from './donation-repository';

/** Open donations on providers this deployment no longer talks to: boot must not go on. */
export class ProvidersStillOpenError extends Error {
  override readonly name = 'ProvidersStillOpenError';
}

/**
 * Every provider with donations still open must still be configured: without its credentials
 * its donations fail for good and its webhook route is gone, so a payment made there is never
 * credited. Run at boot, against the donations table (the config reader has no database).
 * Returns the open donations of the providers that are closing, for the boot log.
 */
export async function checkOpenDonationProviders(
  donations: DonationRepository,
  configured: ReadonlySet<string>,
  closing: readonly string[],
): Promise<Map<string, number>> {
  const open = await donations.countOpenByProvider();
  const missing = [...open].filter(([provider]) => !configured.has(provider));
  if (missing.length > 0) {
    const named = missing.map(([provider, count]) => `${provider} (${count})`).join(', ');
    const names = missing.map(([provider]) => provider).join(',');
    throw new ProvidersStillOpenError(
      `donations are still open on ${named}, which this configuration does not set up: keep its credentials and list it in PROVIDERS_CLOSING=${names} until they end`,
    );
  }
  return new Map(closing.map((provider) => [provider, open.get(provider) ?? 0]));
}
