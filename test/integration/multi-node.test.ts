import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { removeStoreFiles } from '../../src/idempotency/claims-location';
import { spawnApi } from '../support/api-process';
import type { ApiProcess } from '../support/api-process';
import { postDonation } from '../support/donations';
import { startNginx } from '../support/nginx';
import type { Nginx } from '../support/nginx';
import { createCampaign, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';

interface Answer {
  key: string;
  id: string;
  amount: number;
  paymentAction: unknown;
  /** The upstream that answered the 202 (the last one nginx tried). */
  node: string;
}

/** What a client retries with the same key. A 502 is not among them: nginx must never send one. */
const RETRIED = new Set([409, 503]);

/**
 * Many nodes, proven: deploy/nginx.conf's consistent-hash routing run for real (Debian's nginx)
 * in front of two API nodes, each with an LMDB of its own, and one worker. One node is killed
 * with SIGKILL in the middle of a spike; its keys move to the other, and every donation is still
 * confirmed exactly once: the workflow ID and Postgres' unique keys are the global backstop.
 * No donor sees the kill: nginx passes a keyed POST that the dead node had taken on to the
 * next one (safe because of the key), so not one answer is a 502.
 */
describe('two API nodes behind nginx', () => {
  let stack: Stack;
  let nodes: ApiProcess[];
  let nginx: Nginx;
  const dirs: string[] = [];

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: 200 });
    nodes = [];
    for (const name of ['a', 'b']) {
      const dir = mkdtempSync(path.join(os.tmpdir(), `galang-node-${name}-`));
      dirs.push(dir);
      nodes.push(await spawnApi(stack.config, { LMDB_PATH: dir }));
    }
    nginx = await startNginx(nodes.map((node) => new URL(node.url).host));
    // Webhooks, too, reach the nodes through the balancer.
    stack.simulator.webhookUrl = `${nginx.url}/v1/webhooks/simulator`;
  }, 120_000);
  afterAll(async () => {
    await nginx.stop();
    await Promise.all(nodes.map((node) => node.stop()));
    for (const dir of dirs) removeStoreFiles(dir);
    await stack.stop();
  });

  /** Answers no donor should get: a 502 or 504 from nginx, or no answer at all. */
  const lost: string[] = [];

  /** Posts until accepted, as a client does: the same key after Retry-After on 409/503. */
  const donate = async (campaignId: string, key: string, amount: number): Promise<Answer> => {
    const body = {
      campaignId,
      amount,
      currency: 'IDR',
      donor: { name: 'Ani', email: 'ani@example.com', anonymous: false },
      paymentMethod: 'qris',
    };
    for (let attempt = 0; attempt < 60; attempt++) {
      const response = await postDonation(nginx.url, key, body).catch((error: unknown) => {
        lost.push(`${key}: ${String(error)}`);
        return undefined;
      });
      if (response?.status === 202) {
        const answer = (await response.json()) as { id: string; paymentAction: unknown };
        const node = (response.headers.get('x-galang-upstream') ?? '').split(', ').pop() ?? '';
        return { key, amount, node, ...answer };
      }
      // Recorded, and retried all the same, so the exactly-once checks below still run.
      if (response?.status === 502 || response?.status === 504) {
        lost.push(`${key}: ${response.status}`);
      } else if (response && !RETRIED.has(response.status)) {
        throw new Error(`${key}: ${response.status} ${await response.text()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`${key} was never accepted`);
  };

  it('moves a killed node’s keys to the other and confirms every donation exactly once', async () => {
    const campaignId = await createCampaign(stack.db);
    const [a, b] = nodes.map((node) => new URL(node.url).host);
    const answers: Answer[] = [];
    let next = 0;
    let killed = false;
    const kill = async () => {
      killed = true;
      await nodes[0]?.kill9();
    };
    // 16 donors in a closed loop; node A dies once a third of the donations are in.
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < 90) {
          const i = next++;
          answers.push(await donate(campaignId, `spike-node-${campaignId}-${i}`, 1_000 + i));
          if (!killed && answers.length >= 30) await kill();
        }
      }),
    );
    expect(killed).toBe(true);
    expect(lost).toEqual([]);
    const byA = answers.filter((answer) => answer.node === a);
    expect(byA.length).toBeGreaterThan(0);
    expect(answers.filter((answer) => answer.node === b).length).toBeGreaterThan(0);

    // Every key again: all of them are answered by B now, with the donation they made, also
    // the keys A answered (B has no record of them: it re-attaches through the workflow ID).
    for (const answer of answers) {
      const again = await donate(campaignId, answer.key, answer.amount);
      expect(again.node).toBe(b);
      expect(again.id).toBe(answer.id);
      expect(again.paymentAction).toEqual(answer.paymentAction);
    }

    // Exactly once, from the data: rows, provider charges, ledger, totals.
    const ids = new Set(answers.map((answer) => answer.id));
    expect(ids.size).toBe(90);
    await eventually(async () => {
      const row = await stack.db
        .selectFrom('donations')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('campaign_id', '=', campaignId)
        .where('status', '=', 'CONFIRMED')
        .executeTakeFirstOrThrow();
      return Number(row.n) === 90 || undefined;
    }, 60_000);
    const rows = await stack.db
      .selectFrom('donations')
      .select('id')
      .where('campaign_id', '=', campaignId)
      .execute();
    expect(new Set(rows.map((row) => row.id))).toEqual(ids);
    for (const id of ids) expect(stack.simulator.chargeCount(`${id}:create`)).toBe(1);
    const ledger = await stack.db
      .selectFrom('donation_ledger')
      .select(['donation_id', 'entry_type', 'amount'])
      .where('campaign_id', '=', campaignId)
      .execute();
    expect(ledger).toHaveLength(90);
    expect(new Set(ledger.map((entry) => entry.donation_id))).toEqual(ids);
    expect(ledger.every((entry) => entry.entry_type === 'DONATION')).toBe(true);
    const sum = answers.reduce((total, answer) => total + answer.amount, 0);
    expect(ledger.reduce((total, entry) => total + entry.amount, 0)).toBe(sum);
    const totals = await stack.db
      .selectFrom('campaign_totals')
      .select(['confirmed_amount', 'donation_count'])
      .where('campaign_id', '=', campaignId)
      .executeTakeFirstOrThrow();
    expect(totals).toEqual({ confirmed_amount: sum, donation_count: 90 });
  }, 180_000);
});

/**
 * deploy/nginx.conf's retry policy on its own, against two stand-in upstreams that answer 503
 * to everything: a POST with an Idempotency-Key is passed to the next host (method and body
 * unchanged), a POST without one (a webhook) never is.
 */
describe('nginx in front of nodes that answer 503', () => {
  it('passes a keyed POST on to the next node, and never an unkeyed one', async () => {
    const seen: { node: number; method: string; url: string; body: string }[] = [];
    const servers = await Promise.all(
      [0, 1].map(
        (node) =>
          new Promise<http.Server>((resolve) => {
            const server = http.createServer((request, response) => {
              let body = '';
              request.on('data', (chunk: Buffer) => (body += chunk.toString()));
              request.on('end', () => {
                seen.push({ node, method: request.method ?? '', url: request.url ?? '', body });
                response.writeHead(503, { 'retry-after': '1' }).end();
              });
            });
            server.listen(0, '127.0.0.1', () => {
              resolve(server);
            });
          }),
      ),
    );
    const nginx = await startNginx(
      servers.map((server) => `127.0.0.1:${(server.address() as AddressInfo).port}`),
    );
    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${nginx.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{"amount":1}',
      });
    try {
      expect((await post('/v1/donations', { 'idempotency-key': 'retry-me' })).status).toBe(503);
      expect(seen).toHaveLength(2);
      expect(new Set(seen.map((request) => request.node))).toEqual(new Set([0, 1]));
      for (const request of seen) {
        expect(request).toMatchObject({
          method: 'POST',
          url: '/v1/donations',
          body: '{"amount":1}',
        });
      }
      seen.length = 0;
      expect((await post('/v1/webhooks/simulator', {})).status).toBe(503);
      expect(seen).toHaveLength(1);
      // Every node answering 503 (Temporal away, say) marks none down: each donor still gets
      // the 503 and its Retry-After, never nginx's 502 "no live upstreams", and the webhooks
      // that follow still reach a node.
      const answers = [];
      for (let i = 0; i < 12; i++) {
        answers.push((await post('/v1/donations', { 'idempotency-key': `again-${i}` })).status);
      }
      expect(answers).toEqual(answers.map(() => 503));
      seen.length = 0;
      expect((await post('/v1/webhooks/simulator', {})).status).toBe(503);
      expect(seen).toHaveLength(1);
    } finally {
      await nginx.stop();
      for (const server of servers) server.close();
    }
  });
});
