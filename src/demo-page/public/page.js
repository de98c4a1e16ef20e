// The campaign page: a reference for front ends calling galang's public API. Progress and the
// donor wall are polled with If-None-Match; each submission gets one Idempotency-Key, reused on
// every retry of it; the donation's status is followed until it settles, then its receipt until
// it is numbered. Plain DOM, no framework, no build step.

import { decimal, toMinor } from './amounts.js';
import { getJson, postDonation, postPledge, sleep } from './api.js';
import { cancelPledge, hidePledge, showPledge } from './pledge.js';
import { pollProgress } from './progress.js';
import { pollWall } from './wall.js';

const $ = (id) => document.getElementById(id);

/** Statuses a donation leaves on its own; any other is where it stays. */
const OPEN = new Set(['PENDING', 'AWAITING_PAYMENT']);
/** Preset amounts in major units, by the currency's minor-unit exponent. */
const PRESETS = { 0: ['10000', '25000', '50000', '100000'], 2: ['5', '10', '25', '50'] };
/** The writer numbers confirmations every few seconds: asked once a second, for a minute. */
const RECEIPT_POLL_MS = 1_000;
const RECEIPT_WAIT_MS = 60_000;

let page; // { config, campaign, money }
let submission; // { key, json, answer }: the form as last sent, its key, the API's answer
let shown; // the donation on screen: { id, key }
let sending = 0;

const authorization = () => ({ authorization: `Bearer ${page.config.clientKey}` });

function showError(message) {
  $('form-error').textContent = message;
  $('form-error').hidden = message === '';
}

// --- the donation form -------------------------------------------------------------------------

function renderPresets() {
  const { minorUnits } = page.campaign;
  (PRESETS[minorUnits] ?? PRESETS[2]).forEach((major, index) => {
    const label = document.createElement('label');
    const input = document.createElement('input');
    Object.assign(input, { type: 'radio', name: 'amount', checked: index === 1 });
    input.value = String(toMinor(major, minorUnits));
    label.append(input, page.money(Number(input.value)));
    $('presets').append(label);
  });
  $('other').placeholder = minorUnits === 0 ? 'e.g. 75.000' : 'e.g. 7,50';
  $('other').addEventListener('input', () => {
    for (const radio of document.querySelectorAll('input[name=amount]')) radio.checked = false;
  });
}

function readForm() {
  const data = new FormData($('donate'));
  const other = String(data.get('other') ?? '').trim();
  const amount = other
    ? toMinor(other, page.campaign.minorUnits)
    : Number(data.get('amount') ?? Number.NaN);
  if (!Number.isSafeInteger(amount) || amount < 1) {
    showError('Choose an amount, or type one (whole rupiah, or with decimals where they exist).');
    return undefined;
  }
  const message = String(data.get('message') ?? '').trim();
  return {
    campaignId: page.campaign.id,
    amount,
    currency: page.campaign.currency,
    donor: {
      name: String(data.get('name')).trim(),
      email: String(data.get('email')).trim(),
      anonymous: data.get('anonymous') === 'on',
    },
    ...(message ? { message } : {}),
    paymentMethod: String(data.get('method')),
    // A monthly gift charges this period now and every month after, on this day.
    ...(data.get('monthly') === 'on' ? { interval: 'monthly' } : {}),
  };
}

async function submit(event) {
  event.preventDefault();
  showError('');
  const body = readForm();
  if (!body) return;
  const json = JSON.stringify(body);
  // Sending the same form again (a double click, a retry after an error) is the same
  // submission: it keeps its key, so the API answers with the one donation it made.
  if (submission?.json !== json) submission = { key: crypto.randomUUID(), json };
  const sent = submission;
  setSending(+1);
  try {
    if (body.interval) {
      const answer = await postPledge(sent, page.config.clientKey);
      showDonation(answer.firstDonation, sent.key);
      showPledge(answer.pledge);
    } else {
      showDonation(await postDonation(sent, page.config.clientKey), sent.key);
    }
  } catch (error) {
    showError(error.message);
  } finally {
    setSending(-1);
  }
}

/** Not disabled while sending, on purpose: the key makes a second click harmless. */
function setSending(delta) {
  sending += delta;
  $('submit').setAttribute('aria-busy', String(sending > 0));
  $('submit').textContent = sending > 0 ? 'Sending…' : 'Donate';
}

// --- the donation ------------------------------------------------------------------------------

function showDonation(donation, key) {
  if (shown?.id === donation.id) return; // a second answer for the same donation
  shown = { id: donation.id, key };
  hidePledge();
  $('donation').hidden = false;
  $('again').hidden = true;
  $('workflow').hidden = true;
  $('receipt').hidden = true;
  $('d-amount').textContent = page.money(donation.amount);
  $('d-key').textContent = key;
  $('pay').replaceChildren(paymentElement(donation.id, donation.paymentAction));
  showStatus({ status: donation.status });
  void followStatus(donation.id);
}

function paymentElement(donationId, action) {
  if (action?.type === 'qr') {
    // The API draws the donation's own QR string; it takes no text to draw.
    const img = document.createElement('img');
    img.alt = 'QR code to pay this donation';
    img.src = `/demo/donations/${encodeURIComponent(donationId)}/qr.svg`;
    return img;
  }
  const p = document.createElement('p');
  if (action?.type === 'redirect') {
    const link = Object.assign(document.createElement('a'), { href: action.value });
    link.textContent = 'Pay at the payment page';
    p.append(link);
  } else if (action?.type === 'virtual_account') {
    const code = document.createElement('code');
    code.textContent = action.value;
    p.append('Transfer to virtual account ', code);
  } else {
    p.textContent = 'Waiting for the payment details…';
  }
  return p;
}

function showStatus(view) {
  $('d-status').textContent = view.status;
  $('d-status').dataset.status = view.status;
  const open = OPEN.has(view.status);
  $('simulate').hidden = !(page.config.simulatePayments && view.status === 'AWAITING_PAYMENT');
  $('again').hidden = open;
  if (view.workflowId) {
    const { url, namespace } = page.config.temporalUi;
    $('workflow').href =
      `${url}/namespaces/${encodeURIComponent(namespace)}/workflows/` +
      encodeURIComponent(view.workflowId);
    $('workflow').hidden = false;
  }
}

/**
 * Reads the donation until it settles. `wait` asks the API to hold the answer until the status
 * changes where it can; answered at once, the loop still asks at most once a second.
 */
async function followStatus(id) {
  while (shown?.id === id) {
    const started = Date.now();
    try {
      const view = await getJson(`/v1/donations/${id}?wait=10`, {
        headers: authorization(),
        cache: 'no-store',
      });
      if (shown?.id !== id) return;
      showStatus(view);
      if (view.status === 'CONFIRMED') void followReceipt(id);
      if (!OPEN.has(view.status)) return;
    } catch {
      // A blip: ask again.
    }
    await sleep(Math.max(0, 1000 - (Date.now() - started)));
  }
}

/** Reads the confirmed donation's receipt until the organization has numbered it. */
async function followReceipt(id) {
  $('receipt').textContent = 'Issuing the receipt…';
  $('receipt').hidden = false;
  const end = Date.now() + RECEIPT_WAIT_MS;
  while (shown?.id === id && Date.now() < end) {
    const started = Date.now();
    try {
      const { receipt } = await getJson(`/v1/donations/${encodeURIComponent(id)}/receipt`, {
        headers: authorization(),
        cache: 'no-store',
      });
      if (shown?.id !== id) return;
      if (receipt) {
        showReceipt(receipt);
        return;
      }
    } catch {
      // A blip: ask again.
    }
    await sleep(Math.max(0, RECEIPT_POLL_MS - (Date.now() - started)));
  }
  if (shown?.id === id) $('receipt').textContent = 'The receipt will follow by e-mail.';
}

function showReceipt(receipt) {
  // The page is served on the API's origin; PUBLIC_URL may name another (a proxy in front).
  const url = new URL(receipt.pdfUrl, location.href);
  const link = Object.assign(document.createElement('a'), {
    id: 'receipt-link',
    href: `${url.pathname}${url.search}`,
    target: '_blank',
    rel: 'noopener',
  });
  link.textContent = `Receipt ${receipt.number} (PDF)`;
  $('receipt').replaceChildren(link);
}

async function simulatePayment() {
  $('simulate').setAttribute('aria-busy', 'true');
  try {
    await getJson(`/demo/donations/${shown.id}/simulate-payment`, {
      method: 'POST',
      headers: authorization(),
    });
  } catch (error) {
    showError(error.message);
  } finally {
    $('simulate').removeAttribute('aria-busy');
  }
}

function donateAgain() {
  submission = undefined;
  shown = undefined;
  $('donation').hidden = true;
}

// --- start -------------------------------------------------------------------------------------

async function main() {
  const config = await getJson('/demo/config.json');
  const match = /^\/campaigns\/([^/]+)$/.exec(location.pathname);
  const campaignId = match ? decodeURIComponent(match[1]) : config.defaultCampaignId;
  let campaign;
  try {
    campaign = await getJson(`/demo/campaigns/${encodeURIComponent(campaignId)}`);
  } catch (error) {
    $('title').textContent = error.message;
    $('donate').hidden = true;
    return;
  }
  const format = new Intl.NumberFormat('id-ID', {
    style: 'currency',
    currency: campaign.currency,
    minimumFractionDigits: campaign.minorUnits,
    maximumFractionDigits: campaign.minorUnits,
  });
  page = { config, campaign, money: (minor) => format.format(decimal(minor, campaign.minorUnits)) };
  document.title = `${campaign.title} · galang`;
  $('title').textContent = campaign.title;
  $('goal').textContent = page.money(campaign.goalAmount);
  renderPresets();
  $('donate').addEventListener('submit', submit);
  $('simulate').addEventListener('click', simulatePayment);
  $('again').addEventListener('click', donateAgain);
  $('cancel-pledge').addEventListener('click', () => void cancelPledge(showError));
  if (!config.clientKey || !campaign.acceptingDonations) {
    $('donate').inert = true;
    showError(
      config.clientKey
        ? 'This campaign does not accept donations.'
        : 'This page donates only in development, with the development client key.',
    );
  }
  void pollProgress(campaignId, page.money);
  void pollWall(campaignId, page.money);
}

void main();
