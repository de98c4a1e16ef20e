import { ConfigError, loadConfig } from '../../src/config/config';

describe('webhook intake configuration', () => {
  it('bounds each provider body, the requests held at once, and raw-body retention', () => {
    const config = loadConfig({});
    expect(config.webhooks).toEqual({
      bodyLimits: {
        simulator: 16 * 1024,
        midtrans: 64 * 1024,
        xendit: 64 * 1024,
        stripe: 1024 * 1024,
      },
      maxInFlight: 64,
      bodyRetentionDays: 30,
    });
    expect(Object.isFrozen(config.webhooks.bodyLimits)).toBe(true);
    const tuned = loadConfig({
      WEBHOOK_BODY_LIMIT_MIDTRANS: '32768',
      WEBHOOK_MAX_IN_FLIGHT: '8',
      WEBHOOK_BODY_RETENTION_DAYS: '7',
    });
    expect(tuned.webhooks).toMatchObject({
      bodyLimits: { midtrans: 32_768 },
      maxInFlight: 8,
      bodyRetentionDays: 7,
    });
  });

  it('refuses limits it cannot honour, every one at once', () => {
    let error: unknown;
    try {
      loadConfig({
        WEBHOOK_BODY_LIMIT_STRIPE: '100',
        WEBHOOK_MAX_IN_FLIGHT: '0',
        WEBHOOK_BODY_RETENTION_DAYS: '0',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      expect.stringMatching(/^WEBHOOK_BODY_LIMIT_STRIPE must be an integer/),
      expect.stringMatching(/^WEBHOOK_MAX_IN_FLIGHT must be an integer/),
      expect.stringMatching(/^WEBHOOK_BODY_RETENTION_DAYS must be an integer/),
    ]);
  });
});
