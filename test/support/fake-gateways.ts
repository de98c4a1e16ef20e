/**
 * Loopback stand-ins for the hosted payment APIs, each answering as its provider documents it,
 * edge cases included (see each module). They keep state in memory and count how often money
 * moved per idempotency key.
 */
export type { FakeGateway } from './fake-gateway';
export { fakeMidtrans } from './fake-midtrans';
export type { FakeMidtrans } from './fake-midtrans';
export { fakeStripe } from './fake-stripe';
export type { FakeStripe } from './fake-stripe';
export { fakeXendit } from './fake-xendit';
export type { FakeXendit } from './fake-xendit';
