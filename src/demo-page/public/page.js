// The campaign page: a reference for front ends calling galang's public API. Progress is polled
// with If-None-Match; each submission gets one Idempotency-Key, reused on every retry of it; the
// donation's status is followed until it settles. Plain DOM, no framework, no build step.

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits `ms`, or less once `done()` holds. */
async function sleepUnless(done, ms) {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await sleep(Math.min(250, end - Date.now()));
}

/** Statuses a donation leaves on its own; any other is where it stays. */
const OPEN = new Set(['PENDING', 'AWAITING_PAYMENT']);
/** Preset amounts in major units, by the currency's minor-unit exponent. */
const PRESETS = { 0: ['10000', '25000', '50000', '100000'], 2: ['5', '10', '25', '50'] };
const PROGRESS_POLL_MS = 2_000;
const MAX_ATTEMPTS = 5;

let page; // { config, campaign, money }
let submission; // { key, json, answer }: the form as last sent, its key, the API's answer
let shown; // the donation on screen: { id, key }
let sending = 0;

/** Minor units as an exact decimal string (Intl.NumberFormat formats strings without floats). */
function decimal(minor, exponent) {
  if (exponent === 0) return String(minor);
  const digits = String(minor).padStart(exponent + 1, '0');
  return `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

/** What a donor typed ("75.000", "7,50") in minor units, exactly; undefined if it is not one. */
function toMinor(text, exponent) {
  const plain = text.replace(/\s/g, '');
  if (exponent === 0) {
    // Rupiah are written with dots between thousands and have no decimals.
    return /^\d{1,3}(\.\d{3})*$|^\d+$/.test(plain) ? Number(plain.replace(/\./g, '')) : undefined;
  }
  const match = new RegExp(`^(\\d+)(?:[.,](\\d{1,${exponent}}))?$`).exec(plain);
  if (!match) return undefined;
  return Number(match[1] + (match[2] ?? '').padEnd(exponent, '0'));
}

async function getJson(url, init) {
  const response = await fetch(url, init);
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.detail ?? body.title ?? `HTTP ${response.status}`);
  return body;
}

const authorization = () => ({ authorization: `Bearer ${page.config.clientKey}` });

function showError(message) {
  $('form-error').textContent = message;
  $('form-error').hidden = message === '';
}

// --- progress ----------------------------------------------------------------------------------

function showProgress(progress) {
  const section = $('progress');
  section.dataset.confirmedAmount = String(progress.confirmedAmount);
  section.classList.toggle('stale', progress.stale);
  $('raised').textContent = page.money(progress.confirmedAmount);
  $('goal').textContent = page.money(progress.goalAmount);
  $('fill').style.width = `${Math.min(100, progress.percent)}%`;
  $('bar').setAttribute('aria-valuenow', String(Math.min(100, progress.percent)));
  $('percent').textContent = `${progress.percent.toLocaleString('id-ID')}%`;
  const count = progress.donationCount;
  $('count').textContent = `${count.toLocaleString('id-ID')} donation${count === 1 ? '' : 's'}`;
  $('stale').hidden = !progress.stale;
}

/** Polls with the last ETag: an unchanged total costs a 304 and no body. */
async function pollProgress(campaignId) {
  let etag;
  for (;;) {
    try {
      const response = await fetch(`/v1/campaigns/${encodeURIComponent(campaignId)}/progress`, {
        headers: etag ? { 'if-none-match': etag } : {},
        cache: 'no-store',
      });
      if (response.status === 200) {
        etag = response.headers.get('etag') ?? undefined;
        showProgress(await response.json());
      }
    } catch {
      // Offline for a moment: keep the last value and ask again.
    }
    await sleep(PROGRESS_POLL_MS);
  }
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
  };
}

/**
 * POSTs one submission, retrying what may succeed later (the network, 503, 429, and 409 while
 * an earlier attempt of this same key is still running) with the same key and the same body,
 * until this or another send of the submission has its answer.
 */
async function postDonation(sent) {
  for (let attempt = 1; ; attempt++) {
    if (sent.answer) return sent.answer;
    let response;
    try {
      response = await fetch('/v1/donations', {
        method: 'POST',
        headers: {
          ...authorization(),
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
    showDonation(await postDonation(sent), sent.key);
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
  $('donation').hidden = false;
  $('again').hidden = true;
  $('workflow').hidden = true;
  $('d-amount').textContent = page.money(donation.amount);
  $('d-key').textContent = key;
  $('pay').replaceChildren(paymentElement(donation.paymentAction));
  showStatus({ status: donation.status });
  void followStatus(donation.id);
}

function paymentElement(action) {
  if (action?.type === 'qr') {
    const img = document.createElement('img');
    img.alt = 'QR code to pay this donation';
    img.src = `/demo/qr.svg?text=${encodeURIComponent(action.value)}`;
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
  if (view.workflow?.id) {
    const { url, namespace } = page.config.temporalUi;
    $('workflow').href =
      `${url}/namespaces/${encodeURIComponent(namespace)}/workflows/` +
      encodeURIComponent(view.workflow.id);
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
      if (!OPEN.has(view.status)) return;
    } catch {
      // A blip: ask again.
    }
    await sleep(Math.max(0, 1000 - (Date.now() - started)));
  }
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
  if (!config.clientKey || !campaign.acceptingDonations) {
    $('donate').inert = true;
    showError(
      config.clientKey
        ? 'This campaign does not accept donations.'
        : 'This page donates only in development, with the development client key.',
    );
  }
  void pollProgress(campaignId);
}

void main();
