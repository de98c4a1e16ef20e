import { randomBytes, randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { METADATA_ENCODING_KEY } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { donationWorkflowId } from '../../workflows/contracts';
import { DonationRepository } from '../../src/donations/donation-repository';
import { createStripeProvider } from '../../src/providers/stripe/stripe-provider';
import { EncryptionCodec, ENCRYPTED_ENCODING } from '../../src/temporal/payload-codec';
import { postDonation, waitForStatus } from '../support/donations';
import { fakeStripe } from '../support/fake-gateways';
import type { FakeGateway } from '../support/fake-gateways';
import {
  CLIENT_SECRET,
  CODEC_SECRET,
  OPERATOR_SECRET,
  STRIPE_WEBHOOK_SECRET,
  createCampaign,
  eventually,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';

const key = () => randomBytes(32).toString('base64');
const CURRENT = { id: 'k2', key: key() };
const PREVIOUS = { id: 'k1', key: key() };
const STRIPE_KEY = 'sk_test_history_privacy';
const UI_ORIGIN = 'https://temporal-ui.example.org';

type JsonPayload = { metadata: Record<string, string>; data: string };
const toJson = (payload: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
});

type Found = { path: string; payload: Payload };

/**
 * Every payload in a history, found by walking the decoded protobuf objects, with where it was
 * found; but for what codecs leave alone by design: search attributes (the server indexes
 * them: campaign, status, provider), headers (the request's correlation id) and the SDK's
 * marker bookkeeping.
 */
function payloadsOf(node: unknown, path = '', found: Found[] = []): Found[] {
  if (/\.(searchAttributes|header)$/.test(path)) return found;
  // The SDK's own marker bookkeeping (a patch's id; a local activity's sequence number, type
  // and times), written without the codec; a local activity's result is under `result`.
  if (/\.markerRecordedEventAttributes\.details\.(patch-data|data)$/.test(path)) return found;
  if (Array.isArray(node)) for (const child of node) payloadsOf(child, path, found);
  else if (node && typeof node === 'object' && !(node instanceof Uint8Array)) {
    const record = node as Record<string, unknown>;
    if (record.data instanceof Uint8Array && typeof record.metadata === 'object') {
      found.push({ path, payload: record });
    }
    for (const [name, value] of Object.entries(record)) payloadsOf(value, `${path}.${name}`, found);
  }
  return found;
}

/**
 * A finished donation's whole history, as anyone who can read Temporal sees it, holds neither
 * the donor's name, e-mail or message nor the Stripe client secret: the donor's data never
 * enters the workflow (the edge writes it to Postgres), and the payload codec encrypts the rest
 * on every client and worker, read through the codec endpoint with the codec role's key.
 */
describe('donor data in Temporal histories', () => {
  let stack: Stack;
  let stripe: FakeGateway;

  beforeAll(async () => {
    stripe = await fakeStripe(STRIPE_KEY);
    const provider = createStripeProvider({
      baseUrl: stripe.url,
      secretKey: STRIPE_KEY,
      webhookSecrets: [STRIPE_WEBHOOK_SECRET],
    });
    stack = await startStack({
      paymentTimeoutSeconds: 2,
      providers: new Map([['stripe', provider]]),
      defaultProvider: 'stripe',
      env: {
        TEMPORAL_PAYLOAD_KEYS: `${CURRENT.id}:${CURRENT.key},${PREVIOUS.id}:${PREVIOUS.key}`,
        TEMPORAL_UI_ORIGINS: UI_ORIGIN,
      },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await stripe.close();
  });

  const codec = (operation: 'decode' | 'encode', payloads: JsonPayload[], auth = CODEC_SECRET) =>
    fetch(`${stack.apiUrl}/v1/codec/${operation}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
      body: JSON.stringify({ payloads }),
    });

  it('keeps the donor out of a finished donation’s history, and the client secret encrypted', async () => {
    const tag = randomUUID();
    const donor = { name: `Siti Nurhaliza ${tag}`, email: `siti.${tag}@example.org` };
    const message = `Semoga lancar ${tag}`;
    const campaignId = await createCampaign(stack.db);
    const response = await postDonation(stack.apiUrl, `privacy-${tag}`, {
      campaignId,
      amount: 75_000,
      currency: 'IDR',
      donor: { ...donor, anonymous: false },
      message,
      paymentMethod: 'card',
    });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as { id: string; paymentAction: { value: string } };
    const clientSecret = accepted.paymentAction.value;
    expect(clientSecret).toMatch(/^pi_\w+_secret_/);

    const row = await eventually(async () => {
      const found = await new DonationRepository(stack.db).findById(accepted.id);
      return found?.providerReference ? found : undefined;
    });
    stripe.set(row.providerReference ?? '', 'succeeded');
    await waitForStatus(stack, accepted.id, 'CONFIRMED');
    const workflowId = donationWorkflowId(accepted.id);
    await stack.temporal.workflow.getHandle(workflowId).result();

    // The history as the server stores it, page by page, serialized back to its bytes.
    const events: temporal.api.history.v1.IHistoryEvent[] = [];
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await stack.temporal.workflowService.getWorkflowExecutionHistory({
        namespace: stack.config.temporal.namespace,
        execution: { workflowId },
        ...(nextPageToken && { nextPageToken }),
      });
      events.push(...(page.history?.events ?? []));
      nextPageToken = page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
    } while (nextPageToken);
    const bytes = Buffer.from(temporal.api.history.v1.History.encode({ events }).finish());
    expect(events.length).toBeGreaterThan(10);

    for (const secret of [donor.name, donor.email, message, clientSecret, tag]) {
      expect(bytes.includes(Buffer.from(secret))).toBe(false);
    }
    // Every payload is ciphertext under the current key. Decrypted, they give the client
    // secret back, never the donor: the edge keeps the donor's data out of the workflow.
    const found = payloadsOf(events);
    expect(found.length).toBeGreaterThan(5);
    const meta = ({ payload }: Found, name: string) =>
      Buffer.from(payload.metadata?.[name] ?? '').toString();
    expect(found.filter((p) => meta(p, METADATA_ENCODING_KEY) !== ENCRYPTED_ENCODING)).toEqual([]);
    expect(new Set(found.map((p) => meta(p, 'encryption-key-id')))).toEqual(new Set(['k2']));
    const payloads = found.map((p) => p.payload);
    const decoded = await codec('decode', payloads.map(toJson));
    expect(decoded.status).toBe(200);
    const plain = Buffer.concat(
      ((await decoded.json()) as { payloads: JsonPayload[] }).payloads.map((p) =>
        Buffer.from(p.data, 'base64'),
      ),
    );
    expect(plain.includes(Buffer.from(clientSecret))).toBe(true);
    for (const secret of [donor.name, donor.email, message]) {
      expect(plain.includes(Buffer.from(secret))).toBe(false);
    }
    // The donation has its donor all the same: Postgres is where it lives.
    expect(row.donor).toEqual({ ...donor, anonymous: false });
    expect(row.message).toBe(message);
  });

  it('serves the codec endpoint to the codec role only, and across origins to the Web UI only', async () => {
    const payload = { metadata: {}, data: Buffer.from('"x"').toString('base64') };
    expect((await fetch(`${stack.apiUrl}/v1/codec/decode`, { method: 'POST' })).status).toBe(401);
    expect((await codec('decode', [payload], CLIENT_SECRET)).status).toBe(403);
    // The operator key refunds; it no longer decodes.
    const asOperator = await codec('decode', [payload], OPERATOR_SECRET);
    expect(asOperator.status).toBe(403);
    expect(await asOperator.json()).toMatchObject({ code: 'forbidden' });
    expect((await codec('encode', [payload], OPERATOR_SECRET)).status).toBe(403);
    // And the codec key opens nothing but the codec endpoint.
    const refund = await fetch(`${stack.apiUrl}/v1/donations/${randomUUID()}/refunds`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${CODEC_SECRET}`,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
      },
      body: JSON.stringify({ reason: 'not the codec role' }),
    });
    expect(refund.status).toBe(403);
    const read = await fetch(`${stack.apiUrl}/v1/donations/${randomUUID()}`, {
      headers: { authorization: `Bearer ${CODEC_SECRET}` },
    });
    expect(read.status).toBe(403);

    const preflight = (origin: string) =>
      fetch(`${stack.apiUrl}/v1/codec/decode`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type,x-namespace',
        },
      });
    const allowed = await preflight(UI_ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    expect(allowed.headers.get('access-control-allow-headers')).toMatch(/authorization/);
    const other = await preflight('https://evil.example.com');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('decodes payloads written under a rotated-out key, and passes plain ones through', async () => {
    const [old] = await new EncryptionCodec([PREVIOUS]).encode([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"old donor"') },
    ]);
    const plainPayload = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from('"plain"').toString('base64'),
    };
    if (!old) throw new Error('no payload');
    const response = await codec('decode', [toJson(old), plainPayload]);
    expect(response.status).toBe(200);
    const { payloads } = (await response.json()) as { payloads: JsonPayload[] };
    expect(payloads.map((p) => Buffer.from(p.data, 'base64').toString())).toEqual([
      '"old donor"',
      '"plain"',
    ]);

    // An empty list, as `temporal --codec-endpoint` sends it (proto JSON leaves it out).
    const empty = await fetch(`${stack.apiUrl}/v1/codec/decode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CODEC_SECRET}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(await empty.json()).toEqual({ payloads: [] });

    const encoded = await codec('encode', [plainPayload]);
    const [again] = ((await encoded.json()) as { payloads: JsonPayload[] }).payloads;
    expect(Buffer.from(again?.metadata['encryption-key-id'] ?? '', 'base64').toString()).toBe('k2');

    const unknown = await new EncryptionCodec([{ id: 'k0', key: key() }]).encode([
      { metadata: {}, data: Buffer.from('"x"') },
    ]);
    const refused = await codec('decode', unknown.map(toJson));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/"k0"/);
  });
});
