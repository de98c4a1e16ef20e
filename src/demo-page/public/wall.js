// The donor wall, polled with If-None-Match like the progress bar: an unchanged wall costs a
// 304. Everything from the API is set as text (textContent), never parsed as HTML.

import { sleep } from './api.js';

const $ = (id) => document.getElementById(id);
const WALL_POLL_MS = 2_000;
const WALL_LIMIT = 10;

const when = new Intl.DateTimeFormat('id-ID', { dateStyle: 'medium', timeStyle: 'short' });

function entryElement(entry, money) {
  const item = document.createElement('li');
  const head = document.createElement('p');
  const name = document.createElement('strong');
  name.className = 'wall-name';
  name.textContent = entry.name;
  head.append(name);
  if (entry.amount !== null) head.append(` · ${money(entry.amount)}`);
  const time = document.createElement('time');
  time.dateTime = entry.confirmedAt;
  time.textContent = when.format(new Date(entry.confirmedAt));
  head.append(' · ', time);
  item.append(head);
  if (entry.message !== null) {
    const message = document.createElement('p');
    message.className = 'wall-message';
    message.textContent = entry.message;
    item.append(message);
  }
  return item;
}

function showWall(wall, money) {
  $('wall-list').replaceChildren(...wall.donations.map((entry) => entryElement(entry, money)));
  $('wall').dataset.count = String(wall.donations.length);
  $('wall-empty').hidden = wall.donations.length > 0;
  $('wall-more').hidden = wall.next === null;
}

/** Polls the newest page with the last ETag; new confirmations appear within a poll. */
export async function pollWall(campaignId, money) {
  let etag;
  for (;;) {
    try {
      const response = await fetch(
        `/v1/campaigns/${encodeURIComponent(campaignId)}/donations?limit=${WALL_LIMIT}`,
        { headers: etag ? { 'if-none-match': etag } : {}, cache: 'no-store' },
      );
      if (response.status === 200) {
        etag = response.headers.get('etag') ?? undefined;
        showWall(await response.json(), money);
      }
    } catch {
      // Offline for a moment: keep the last wall and ask again.
    }
    await sleep(WALL_POLL_MS);
  }
}
