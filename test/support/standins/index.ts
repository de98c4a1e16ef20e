/**
 * Loopback stand-ins for the providers galang's adapters talk to, written from each provider's
 * documentation (see /work/notes/provider-facts.md for the citations). Each one: an HTTP server
 * on 127.0.0.1, lifecycle controls (pay, settle, reverse, refund outcomes, disputes), fault
 * knobs (`faults.add('METHOD /path', …)`: 5xx, 429, hang) and a `Notifier` that signs with the
 * stand-in's own code and retries as documented, compressible with `timeScale`.
 */
export { startMidtransStandin } from './midtrans';
export type { MidtransStandin } from './midtrans';
export { startStripeStandin } from './stripe';
export type { StripeStandin } from './stripe';
export { startXenditStandin } from './xendit';
export type { XenditStandin } from './xendit';
export { startSink } from './sink';
export type { Fault } from './loopback';
