import Stripe from 'stripe';

const webhooks = new Stripe('sk_test_signing_only').webhooks;

/** A `Stripe-Signature` header for `body`, made by stripe-node as Stripe makes it. */
export function signStripe(secret: string, timestamp: number, body: Buffer | string): string {
  return webhooks.generateTestHeaderString({ payload: body.toString(), secret, timestamp });
}
