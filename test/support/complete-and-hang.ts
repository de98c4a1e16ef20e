import { IdempotencyStore } from '../../src/idempotency/idempotency-store';

/**
 * Child process for the cross-process tests: claims one key and completes it, reports each
 * step on stdout, then waits to be killed with SIGKILL, which skips every cleanup and close.
 * With `--step` it reports `claimed` and waits for a line on stdin before completing.
 */
async function main(): Promise<void> {
  const [dir = '', key = '', mode = ''] = process.argv.slice(2);
  const store = new IdempotencyStore({ path: dir, ttlSeconds: 86_400 });
  const claim = await store.claim(key, 'fp');
  if (claim.outcome !== 'claimed') throw new Error('not claimed');
  if (mode === '--step') {
    process.stdout.write('claimed\n');
    await new Promise((resolve) => process.stdin.once('data', resolve));
  }
  await store.complete(key, claim.claimId, {
    statusCode: 202,
    headers: { 'content-type': 'application/json' },
    body: '{"ok":true}',
  });
  process.stdout.write('completed\n');
  setInterval(() => undefined, 1_000);
}

void main();
