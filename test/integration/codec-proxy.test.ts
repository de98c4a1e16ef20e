import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuditRepository } from '../../src/audit/audit-repository';
import { EncryptionCodec } from '../../src/temporal/payload-codec';
import { startNginxSite } from '../support/nginx';
import type { Nginx } from '../support/nginx';
import { CODEC_SECRET, OPERATOR_SECRET, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

const shipped = readFileSync(path.resolve(__dirname, '../../deploy/codec-proxy.conf'), 'utf8');
/** The UI origin deploy/codec-proxy.conf ships with, as an example to replace. */
const UI_ORIGIN = 'https://temporal.example.org';
const PAYLOAD_KEY = { id: 'k1', key: randomBytes(32).toString('base64') };

/**
 * deploy/codec-proxy.conf as shipped, in Debian's nginx in front of the API, with only its
 * addresses and the key file's path changed: the Web UI's requests decode with the codec key
 * the proxy adds, CORS is answered as Temporal's codec server protocol asks, and nothing but
 * decoding gets through.
 */
describe('the Web UI codec proxy (deploy/codec-proxy.conf)', () => {
  let stack: Stack;
  let nginx: Nginx;
  let dir: string;

  beforeAll(async () => {
    stack = await startStack({
      noWorker: true,
      env: { TEMPORAL_PAYLOAD_KEYS: `${PAYLOAD_KEY.id}:${PAYLOAD_KEY.key}` },
    });
    dir = mkdtempSync(path.join(os.tmpdir(), 'galang-codec-proxy-'));
    const keyFile = path.join(dir, 'codec-key.conf');
    writeFileSync(keyFile, `set $galang_codec_key "${CODEC_SECRET}";\n`);
    const api = new URL(stack.apiUrl).host;
    nginx = await startNginxSite((listen, prefix) => {
      const site = shipped
        .replace('server api:3000;', `server ${api};`)
        .replace('include /etc/nginx/galang/codec-key.conf;', `include ${keyFile};`)
        .replace('/var/log/nginx/', `${prefix}/`)
        .replace('listen 8081;', `listen ${listen};`);
      if (site.includes('api:3000') || site.includes('/etc/nginx')) {
        throw new Error('deploy/codec-proxy.conf changed: update this test');
      }
      return site;
    });
  });
  afterAll(async () => {
    await nginx.stop();
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const preflight = (origin: string) =>
    fetch(`${nginx.url}/codec/decode`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
      },
    });

  it('answers the preflight of the UI’s origin only, without asking galang', async () => {
    const allowed = await preflight(UI_ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    expect(allowed.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(allowed.headers.get('access-control-allow-headers')).toMatch(/X-Namespace/);
    expect(allowed.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
    // nginx's own answer: galang stamps every answer of its own with an X-Request-Id.
    expect(allowed.headers.get('x-request-id')).toBeNull();
    const other = await preflight('https://evil.example.com');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('decodes the UI’s payloads with the codec key it adds, recorded under that key', async () => {
    const donor = `Siti ${randomUUID()}`;
    const [encrypted] = await new EncryptionCodec([PAYLOAD_KEY]).encode([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(`"${donor}"`) },
    ]);
    const body = JSON.stringify({
      payloads: [
        {
          metadata: Object.fromEntries(
            Object.entries(encrypted?.metadata ?? {}).map(([k, v]) => [
              k,
              Buffer.from(v).toString('base64'),
            ]),
          ),
          data: Buffer.from(encrypted?.data ?? new Uint8Array()).toString('base64'),
        },
      ],
    });
    // As the UI sends it: no key of its own, a session cookie the proxy keeps to itself. A key
    // a browser might send (here an operator's) is replaced, not passed on.
    const audit = new AuditRepository(stack.db);
    for (const authorization of [undefined, `Bearer ${OPERATOR_SECRET}`]) {
      const response = await fetch(`${nginx.url}/codec/decode`, {
        method: 'POST',
        headers: {
          origin: UI_ORIGIN,
          'content-type': 'application/json',
          'x-namespace': 'default',
          cookie: 'session=sso',
          ...(authorization === undefined ? {} : { authorization }),
        },
        body,
      });
      expect(response.status).toBe(200);
      // One CORS answer, the proxy's: galang got no Origin.
      expect(response.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
      const { payloads } = (await response.json()) as { payloads: { data: string }[] };
      expect(Buffer.from(payloads[0]?.data ?? '', 'base64').toString()).toBe(`"${donor}"`);

      const requestId = response.headers.get('x-request-id');
      expect(requestId).toMatch(/^[0-9a-f]{32}$/);
      const rows = (await audit.list({ action: 'decode' }, 1_000)).filter(
        (row) => row.requestId === requestId,
      );
      expect(rows).toEqual([
        expect.objectContaining({
          actor: { kind: 'codec', id: 'ui-proxy' },
          payloadCount: 1,
          outcome: expect.objectContaining({ outcome: 'succeeded', status: 200 }) as unknown,
        }),
      ]);
    }
  });

  it('forwards decoding alone', async () => {
    const payloads = JSON.stringify({ payloads: [] });
    const post = (url: string) =>
      fetch(`${nginx.url}${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: payloads,
      });
    expect((await post('/codec/encode')).status).toBe(404);
    expect((await post('/v1/codec/decode')).status).toBe(404);
    expect((await post('/v1/donations')).status).toBe(404);
    expect((await fetch(`${nginx.url}/codec/decode`)).status).toBe(403);
  });
});
