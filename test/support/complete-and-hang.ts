import { IdempotencyStore } from '../../src/idempotency/idempotency-store';

/**
 * Child process for the durability test: completes one record, reports it, then waits to be
 * killed with SIGKILL, which skips every cleanup and close.
 */
async function main(): Promise<void> {
  const [dir = '', key = ''] = process.argv.slice(2);
  const store = new IdempotencyStore({ path: dir, ttlSeconds: 86_400 });
  const claim = await store.claim(key, 'fp');
  if (claim.outcome !== 'claimed') throw new Error('not claimed');
  await store.complete(key, claim.claimId, {
    statusCode: 202,
    headers: { 'content-type': 'application/json' },
    body: '{"ok":true}',
  });
  process.stdout.write('completed\n');
  setInterval(() => undefined, 1_000);
}

void main();
