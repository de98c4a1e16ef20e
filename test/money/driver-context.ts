import type { WebhookDelivery } from '../../src/webhooks/webhook-delivery';
import type { Stack } from '../support/stack';
import type { ProviderDriver } from './provider-driver';

/** What a case needs of the stack it runs on; several cases share one at a time. */
export interface DriverContext {
  stack: Stack;
  /** The provider the stack's donations use, driven through its own controls. */
  provider: ProviderDriver;
  /** Delivers inbox rows again, as the API's redelivery loop would. */
  delivery: WebhookDelivery;
  /** Kills the worker and starts a new one; serialized, as several cases share the worker. */
  restartWorker(): Promise<void>;
  paymentTimeoutSeconds: number;
  settleHorizonSeconds: number;
}
