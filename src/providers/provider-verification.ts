import type { ProviderRegistry } from './payment-provider';

/**
 * Whether a provider's events must be confirmed with its status API before money moves. The
 * safe answer is yes: only an adapter that declares its events signed and complete is trusted
 * as it is, and a provider this process does not know is verified.
 */
export function verifiesWithProvider(providers: ProviderRegistry, name: string): boolean {
  return providers.get(name)?.verifyWithProvider ?? true;
}
