// The campaign's progress bar, polled with If-None-Match: an unchanged total costs a 304.

import { sleep } from './api.js';

const $ = (id) => document.getElementById(id);
const PROGRESS_POLL_MS = 2_000;

function showProgress(progress, money) {
  const section = $('progress');
  section.dataset.confirmedAmount = String(progress.confirmedAmount);
  section.classList.toggle('stale', progress.stale);
  $('raised').textContent = money(progress.confirmedAmount);
  $('goal').textContent = money(progress.goalAmount);
  $('fill').style.width = `${Math.min(100, progress.percent)}%`;
  $('bar').setAttribute('aria-valuenow', String(Math.min(100, progress.percent)));
  $('percent').textContent = `${progress.percent.toLocaleString('id-ID')}%`;
  const count = progress.donationCount;
  $('count').textContent = `${count.toLocaleString('id-ID')} donation${count === 1 ? '' : 's'}`;
  $('stale').hidden = !progress.stale;
}

/** Polls with the last ETag: an unchanged total costs a 304 and no body. */
export async function pollProgress(campaignId, money) {
  let etag;
  for (;;) {
    try {
      const response = await fetch(`/v1/campaigns/${encodeURIComponent(campaignId)}/progress`, {
        headers: etag ? { 'if-none-match': etag } : {},
        cache: 'no-store',
      });
      if (response.status === 200) {
        etag = response.headers.get('etag') ?? undefined;
        showProgress(await response.json(), money);
      }
    } catch {
      // Offline for a moment: keep the last value and ask again.
    }
    await sleep(PROGRESS_POLL_MS);
  }
}
