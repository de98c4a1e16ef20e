// galang's public API as the page calls it: JSON reads, and donations and pledges POSTed under
// one Idempotency-Key that every retry of the same submission reuses.

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits `ms`, or less once `done()` holds. */
async function sleepUnless(done, ms) {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await sleep(Math.min(250, end - Date.now()));
}

const MAX_ATTEMPTS = 5;

export async function getJson(url, init) {
  const response = await fetch(url, init);
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.detail ?? body.title ?? `HTTP ${response.status}`);
  return body;
}

/**
 * POSTs one submission, retrying what may succeed later (the network, 503, 429, and 409 while
 * an earlier attempt of this same key is still running) with the same key and the same body,
 * until this or another send of the submission has its answer. `sent` is `{ key, json, answer }`.
 */
export async function postDonation(sent, clientKey) {
  return postKeyed('/v1/donations', sent, clientKey);
}

/** A monthly gift: the same submission rules; the answer is `{ pledge, firstDonation }`. */
export async function postPledge(sent, clientKey) {
  return postKeyed('/v1/pledges', sent, clientKey);
}

async function postKeyed(path, sent, clientKey) {
  for (let attempt = 1; ; attempt++) {
    if (sent.answer) return sent.answer;
    let response;
    try {
      response = await fetch(path, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${clientKey}`,
          'content-type': 'application/json',
          'idempotency-key': sent.key,
        },
        body: sent.json,
      });
    } catch {
      if (attempt >= MAX_ATTEMPTS) throw new Error('No network: press Donate to try again.');
      await sleepUnless(() => sent.answer, 500 * 2 ** attempt);
      continue;
    }
    if (response.ok) return (sent.answer = await response.json());
    const problem = await response.json().catch(() => ({}));
    const retryable =
      response.status === 503 ||
      response.status === 429 ||
      (response.status === 409 && problem.code === 'idempotency-key-in-use');
    if (!retryable || attempt >= MAX_ATTEMPTS) {
      throw new Error(problem.detail ?? problem.title ?? `HTTP ${response.status}`);
    }
    const retryAfter = Number(response.headers.get('retry-after'));
    const delay = retryAfter > 0 ? Math.min(retryAfter, 10) * 1000 : 500 * 2 ** attempt;
    await sleepUnless(() => sent.answer, delay);
  }
}
