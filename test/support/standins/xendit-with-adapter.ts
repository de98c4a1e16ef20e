import { createXenditProvider } from '../../../src/providers/xendit/xendit-provider';
import { startSink } from './sink';
import { startXenditStandin } from './xendit';

export const XENDIT_STANDIN_SECRET = 'xnd_development_standin';
export const XENDIT_STANDIN_TOKEN = 'standin-callback-token';

/** The Basic auth header Xendit takes: the secret key as the user, no password. */
export const xenditAuth = {
  authorization: `Basic ${Buffer.from(`${XENDIT_STANDIN_SECRET}:`).toString('base64')}`,
};

/**
 * A Xendit stand-in with galang's adapter pointed at it and a sink for each callback URL
 * (invoices, refunds), so a test sees what Xendit would send.
 */
export async function startXenditWithAdapter() {
  const invoices = await startSink();
  const refunds = await startSink();
  const xendit = await startXenditStandin({
    secretKey: XENDIT_STANDIN_SECRET,
    callbackToken: XENDIT_STANDIN_TOKEN,
    invoiceCallbackUrl: invoices.url,
    refundCallbackUrl: refunds.url,
    timeScale: 0,
  });
  const adapter = createXenditProvider({
    baseUrl: xendit.url,
    secretKey: XENDIT_STANDIN_SECRET,
    callbackTokens: [XENDIT_STANDIN_TOKEN],
  });
  return {
    xendit,
    adapter,
    invoices,
    refunds,
    async close() {
      await xendit.close();
      await invoices.close();
      await refunds.close();
    },
  };
}
