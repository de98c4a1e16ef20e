import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config/config';
import { createDataConverter } from '../../src/temporal/payload-codec';
import { testState } from '../support/test-env';

const historiesDir = path.resolve(__dirname, '../histories');

/**
 * Replays recorded workflow histories against today's workflow code: a change that would break
 * running workflows fails here instead of in production. Until the first release such a change
 * re-records the set (`npm run histories:record`, test/record/); after it, it needs `patched()`.
 */
describe('recorded workflow histories', () => {
  const files = readdirSync(historiesDir).filter((f) => f.endsWith('.json'));
  // Recorded in protobufjs' own JSON form; fromObject reads it back (enum names, string longs).
  const load = (file: string) =>
    temporal.api.history.v1.History.fromObject(
      JSON.parse(readFileSync(path.join(historiesDir, file), 'utf8')) as Record<string, unknown>,
    );
  // With the workers' codec: histories recorded before payload encryption pass through it
  // unchanged, later recordings (under the test stack's key) are decrypted.
  const dataConverter = createDataConverter(loadConfig({ NODE_ENV: 'test' }).temporal.payloadKeys);
  const replay = (history: temporal.api.history.v1.IHistory, id: string) =>
    Worker.runReplayHistory(
      { workflowBundle: { codePath: testState().workflowBundlePath }, dataConverter },
      history,
      id,
    );

  it('has a recorded history for every path', () => {
    expect(files.sort()).toEqual([
      'donation-confirmed.json',
      'donation-declined.json',
      'donation-expired-then-paid.json',
      'donation-expired.json',
      'donation-for-dispute.json',
      'donation-lost-webhook.json',
      'donation-needs-review.json',
      'donation-processing-then-paid.json',
      'late-payment.json',
      'pledge-period-first.json',
      'pledge-period-retried.json',
      'reconciliation-run.json',
      'refund-request.json',
      'reversal-dispute-won.json',
      'reversal-refund.json',
    ]);
  });

  it.each(files)('replays %s deterministically', async (file) => {
    await expect(replay(load(file), file)).resolves.toBeUndefined();
  });

  it('fails on a history the code would not produce', async () => {
    const history = load('reversal-refund.json');
    const attributes = history.events.find(
      (e) => e.activityTaskScheduledEventAttributes,
    )?.activityTaskScheduledEventAttributes;
    if (!attributes?.activityType) throw new Error('no activity in the recorded history');
    attributes.activityType.name = 'someOtherActivity';
    await expect(replay(history, 'tampered')).rejects.toThrow(/[Nn]ondetermin/);
  });
});
