import { loadConfig } from '../../src/config/config';
import { productionEnv } from '../support/production-env';

const MIDTRANS = { MIDTRANS_SERVER_KEYS: 'SB-Mid-server-key' };

describe('PROVIDERS_CLOSING', () => {
  it('closes none by default', () => {
    expect(loadConfig({}).payments.closing).toEqual([]);
  });

  it('keeps a closing provider with its credentials, beside the one new donations use', () => {
    const config = loadConfig({
      PAYMENT_PROVIDER: 'xendit',
      XENDIT_SECRET_KEY: 'xnd_key',
      XENDIT_CALLBACK_TOKENS: 'token',
      PROVIDERS_CLOSING: 'midtrans, midtrans',
      ...MIDTRANS,
    });
    expect(config.payments.provider).toBe('xendit');
    expect(config.payments.closing).toEqual(['midtrans']);
    expect(config.payments.midtrans?.serverKeys).toEqual(['SB-Mid-server-key']);
  });

  it('refuses a closing provider without its credentials, and an unknown one', () => {
    expect(() => loadConfig({ PROVIDERS_CLOSING: 'midtrans' })).toThrow(
      /PROVIDERS_CLOSING lists midtrans, but its credentials are not set/,
    );
    expect(() => loadConfig({ PROVIDERS_CLOSING: 'paypal' })).toThrow(
      /PROVIDERS_CLOSING must list providers of simulator, midtrans, xendit, stripe, got "paypal"/,
    );
  });

  it('keeps the simulator (and its webhook route) while it closes, refused in production', () => {
    const config = loadConfig({
      PAYMENT_PROVIDER: 'midtrans',
      PROVIDERS_CLOSING: 'simulator',
      ...MIDTRANS,
    });
    expect(config.simulator.enabled).toBe(true);
    expect(() => loadConfig(productionEnv({ PROVIDERS_CLOSING: 'simulator' }))).toThrow(
      /PROVIDERS_CLOSING=simulator: the simulator moves no money/,
    );
  });
});
