import { SimulatorRefusal } from './simulator-payments';
import type { SimulatorPayment } from './simulator-protocol';

/**
 * How a kept method answers its next charge: `ok` pays at once; a decline is the issuer's
 * (no funds, an expired card); `authentication_required` needs the donor, as a card's 3-D
 * Secure would (Stripe's off-session `authentication_required`).
 */
export type SavedMethodState =
  'ok' | 'insufficient_funds' | 'expired_card' | 'authentication_required';

export const SAVED_METHOD_STATES: readonly SavedMethodState[] = [
  'ok',
  'insufficient_funds',
  'expired_card',
  'authentication_required',
];

/**
 * The methods donors let the simulated gateway keep. A payment created with `save_method` names
 * its method (`saved_method`) once it is settled; a later payment created with that reference
 * charges it without the donor. Tests set how each answers (`/test/saved-methods/:id/:state`).
 */
export class SavedMethods {
  private readonly states = new Map<string, SavedMethodState>();
  /** Answers for the next charges, in order, before the method's own state applies again. */
  private readonly queued = new Map<string, SavedMethodState[]>();
  private readonly released = new Set<string>();
  /** Releases to answer 503 once each, as a gateway's outage would (a test's knob). */
  private readonly failingReleases = new Set<string>();

  /** Keeps a settled payment's method when its creation asked to. */
  keep(payment: SimulatorPayment): void {
    if (!payment.save_method || payment.status !== 'settled' || payment.saved_method) return;
    payment.saved_method = `sm_${payment.id.replace(/^sim_/, '')}`;
    this.states.set(payment.saved_method, 'ok');
  }

  /**
   * How the method answers a new charge (the next queued answer, else its state); a method
   * never kept is a 400, as a gateway's.
   */
  charge(id: string): SavedMethodState {
    const state = this.states.get(id);
    if (!state) throw new SimulatorRefusal(400, 'resource_missing', `no saved method ${id}`);
    return this.queued.get(id)?.shift() ?? state;
  }

  set(id: string, state: SavedMethodState): { id: string; state: SavedMethodState } {
    this.known(id);
    this.states.set(id, state);
    return { id, state };
  }

  /** How the next charges answer, one each (a model's scripted bank), then the state again. */
  queue(id: string, states: readonly SavedMethodState[]): void {
    this.known(id);
    this.queued.set(id, [...(this.queued.get(id) ?? []), ...states]);
  }

  /** Forgets a kept method, as its pledge let it go: no charge can use it again. */
  release(id: string): { id: string; released: true } {
    if (this.failingReleases.delete(id)) {
      throw new SimulatorRefusal(503, 'unavailable', 'simulated gateway error');
    }
    this.known(id);
    this.states.delete(id);
    this.queued.delete(id);
    this.released.add(id);
    return { id, released: true };
  }

  failNextRelease(id: string): void {
    this.failingReleases.add(id);
  }

  wasReleased(id: string): boolean {
    return this.released.has(id);
  }

  private known(id: string): void {
    if (!this.states.has(id)) {
      throw new SimulatorRefusal(404, 'resource_missing', `no saved method ${id}`);
    }
  }
}
