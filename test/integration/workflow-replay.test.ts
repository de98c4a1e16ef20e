import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { testState } from '../support/test-env';

const historiesDir = path.resolve(__dirname, '../histories');

/**
 * Replays recorded workflow histories against today's workflow code: a change that would break
 * running workflows fails here instead of in production. Guard such changes with `patched()`;
 * `npm run histories:record` records a fresh set from the real stack (test/record/).
 */
describe('recorded workflow histories', () => {
  const files = readdirSync(historiesDir).filter((f) => f.endsWith('.json'));
  // Recorded in protobufjs' own JSON form; fromObject reads it back (enum names, string longs).
  const load = (file: string) =>
    temporal.api.history.v1.History.fromObject(
      JSON.parse(readFileSync(path.join(historiesDir, file), 'utf8')) as Record<string, unknown>,
    );
  const replay = (history: temporal.api.history.v1.IHistory, id: string) =>
    Worker.runReplayHistory(
      { workflowBundle: { codePath: testState().workflowBundlePath } },
      history,
      id,
    );

  it('has a recorded history for every path', () => {
    expect(files.sort()).toEqual([
      'donation-confirmed.json',
      'donation-declined.json',
      'donation-expired.json',
      'donation-lost-webhook.json',
      'donation-needs-review.json',
      'money-v2-confirmed.json',
      'money-v2-declined.json',
      'money-v2-expired-then-paid.json',
      'money-v2-expired.json',
      'money-v2-for-dispute.json',
      'money-v2-late-payment.json',
      'money-v2-lost-webhook.json',
      'money-v2-needs-review.json',
      'money-v2-processing-then-paid.json',
      'money-v2-refund-request.json',
      'money-v2-reversal-dispute-won.json',
      'money-v2-reversal-refund.json',
      'reconciliation-run.json',
      'reversal-refund.json',
    ]);
  });

  it.each(files)('replays %s deterministically', async (file) => {
    await expect(replay(load(file), file)).resolves.toBeUndefined();
  });

  it('fails on a history the code would not produce', async () => {
    const history = load('donation-confirmed.json');
    const attributes = history.events.find(
      (e) => e.activityTaskScheduledEventAttributes,
    )?.activityTaskScheduledEventAttributes;
    if (!attributes?.activityType) throw new Error('no activity in the recorded history');
    attributes.activityType.name = 'someOtherActivity';
    await expect(replay(history, 'tampered')).rejects.toThrow(/[Nn]ondetermin/);
  });
});
