// The monthly gift on the page: its status, and cancelling it with the donor's own link
// (`links.manage`, what the donor's e-mail carries), no client key.

import { getJson } from './api.js';

const $ = (id) => document.getElementById(id);

let pledge; // as the API showed it last

export function showPledge(view) {
  pledge = view;
  $('p-status').textContent = view.status;
  $('p-status').dataset.status = view.status;
  $('cancel-pledge').hidden = view.status === 'CANCELLED';
  $('pledge').hidden = false;
}

export function hidePledge() {
  pledge = undefined;
  $('pledge').hidden = true;
}

export async function cancelPledge(showError) {
  if (!pledge) return;
  const manage = new URL(pledge.links.manage, location.href);
  $('cancel-pledge').setAttribute('aria-busy', 'true');
  try {
    showPledge(await getJson(`${manage.pathname}/cancel${manage.search}`, { method: 'POST' }));
  } catch (error) {
    showError(error.message);
  } finally {
    $('cancel-pledge').removeAttribute('aria-busy');
  }
}
