import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { WorkflowNotFoundError } from '@temporalio/client';
import { donationWorkflowId, refundRequestWorkflowId } from '../../workflows/contracts';
import { AuditRepository } from '../../src/audit/audit-repository';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import type { AuditRecord } from '../../src/audit/audit-entry';
import { waitForStatus } from '../support/donations';
import { opsWith } from '../support/ops';
import { createOwnDatabase } from '../support/own-database';
import type { OwnDatabase } from '../support/own-database';
import { donate } from '../support/reconciliation';
import {
  CLIENT_SECRET,
  CODEC_SECRET,
  OPERATOR_SECRET,
  createCampaign,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';

const BLOCKED_SECRET = 'blocked-operator-123';

/** An outcome with at least these fields (and its time). */
const ended = (outcome: object): unknown => expect.objectContaining(outcome);

/**
 * The audit log against real Postgres, on a database of this file's own (its rows are this
 * file's alone): one row per operator action over HTTP and through the ops CLI, written before
 * the action, with its outcome; none for clients, replays and dry runs; and the database
 * itself refusing to change or delete a row.
 */
describe('audit log', () => {
  let own: OwnDatabase;
  let stack: Stack;
  let audit: AuditRepository;

  beforeAll(async () => {
    own = await createOwnDatabase('audit');
    stack = await startStack({
      autoPayMs: 100,
      databaseUrl: own.url,
      env: {
        // A payload key of its own: the codec endpoint then wants the codec role's key.
        TEMPORAL_PAYLOAD_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        OPERATOR_KEYS: `ops:${OPERATOR_SECRET},blocked:${BLOCKED_SECRET}`,
        OPS_ACTOR: 'alice',
      },
    });
    audit = new AuditRepository(stack.db);
  });
  afterAll(async () => {
    await stack.stop();
    await own.drop();
  });

  const call = (method: string, url: string, secret: string, body?: unknown, key?: string) =>
    fetch(`${stack.apiUrl}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${secret}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  /** The rows a request left, by its request id (each response names it). */
  const rowsOf = async (response: Response): Promise<AuditRecord[]> => {
    const requestId = response.headers.get('x-request-id');
    return (await audit.list({}, 1_000)).filter((row) => row.requestId === requestId);
  };

  /** The ops CLI in this process, run by `actor` (OPS_ACTOR). */
  const ops = (actor: string, ...argv: string[]) =>
    opsWith(stack, { ...stack.config, opsActor: actor }, ...argv);

  it('records each operator action over HTTP with who, what, on what, from where and how it ended', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 40_000);
    await waitForStatus(stack, id, 'CONFIRMED');

    const key = randomUUID();
    const refund = await call(
      'POST',
      `/v1/donations/${id}/refunds`,
      OPERATOR_SECRET,
      { amount: 10_000, reason: 'Ani asked for it back' },
      key,
    );
    expect(refund.status).toBe(202);
    const { workflowId } = (await refund.json()) as { workflowId: string };
    const [row, ...others] = await rowsOf(refund);
    expect(others).toEqual([]);
    expect(row).toMatchObject({
      actor: { kind: 'operator', id: 'ops' },
      action: 'refund',
      donationId: id,
      workflowId,
      detail: { amount: 10_000 },
      origin: 'http',
      address: '127.0.0.1',
      outcome: { outcome: 'succeeded', status: 202 },
    });
    // The reason is free text (here: a donor's name): not in the log.
    expect(JSON.stringify(row)).not.toContain('Ani');

    // A replay repeats no action and records none.
    const replay = await call(
      'POST',
      `/v1/donations/${id}/refunds`,
      OPERATOR_SECRET,
      { amount: 10_000, reason: 'Ani asked for it back' },
      key,
    );
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await rowsOf(replay)).toEqual([]);

    // A refused action is recorded with its problem.
    const missing = randomUUID();
    const refused = await call(
      'POST',
      `/v1/donations/${missing}/refunds`,
      OPERATOR_SECRET,
      { reason: 'none' },
      randomUUID(),
    );
    expect(refused.status).toBe(404);
    expect(await rowsOf(refused)).toEqual([
      expect.objectContaining({
        action: 'refund',
        donationId: missing,
        detail: { amount: 'all' },
        outcome: ended({
          outcome: 'failed',
          status: 404,
          error: 'donation-not-found',
        }),
      }),
    ]);

    // An operator's read of a donation is recorded; the client's own read is not.
    const read = await call('GET', `/v1/donations/${id}`, OPERATOR_SECRET);
    expect(read.status).toBe(200);
    expect(await rowsOf(read)).toEqual([
      expect.objectContaining({
        action: 'donation-read',
        donationId: id,
        workflowId: donationWorkflowId(id),
      }),
    ]);
    const clientRead = await call('GET', `/v1/donations/${id}`, CLIENT_SECRET);
    expect(clientRead.status).toBe(200);
    expect(await rowsOf(clientRead)).toEqual([]);

    const created = await call(
      'POST',
      '/v1/campaigns',
      OPERATOR_SECRET,
      { id: `audit-${Date.now()}`, title: 'Audited', goalAmount: 1_000_000, currency: 'IDR' },
      randomUUID(),
    );
    expect(created.status).toBe(201);
    const { id: newCampaign } = (await created.json()) as { id: string };
    const readCampaign = await call('GET', `/v1/campaigns/${newCampaign}`, OPERATOR_SECRET);
    const closed = await call('POST', `/v1/campaigns/${newCampaign}/close`, OPERATOR_SECRET);
    expect(closed.status).toBe(200);
    for (const [response, action] of [
      [created, 'campaign-create'],
      [readCampaign, 'campaign-read'],
      [closed, 'campaign-close'],
    ] as const) {
      expect(await rowsOf(response)).toEqual([
        expect.objectContaining({
          action,
          campaignId: newCampaign,
          outcome: expect.anything() as unknown,
        }),
      ]);
    }
  });

  it('records each decode by the codec key id with the payload count, never the payloads', async () => {
    const secret = `donor-${randomUUID()}`;
    const payloads = [secret, 'another'].map((value) => ({
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from(JSON.stringify(value)).toString('base64'),
    }));
    const response = await fetch(`${stack.apiUrl}/v1/codec/decode`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${CODEC_SECRET}`,
        'content-type': 'application/json',
        'x-namespace': 'default',
      },
      body: JSON.stringify({ payloads }),
    });
    expect(response.status).toBe(200);
    const [row, ...others] = await rowsOf(response);
    expect(others).toEqual([]);
    expect(row).toMatchObject({
      actor: { kind: 'codec', id: 'ui-proxy' },
      action: 'decode',
      payloadCount: 2,
      detail: { namespace: 'default' },
      outcome: { outcome: 'succeeded', status: 200 },
    });
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(JSON.stringify(row)).not.toContain(payloads[0]?.data);

    // Refused keys do nothing and are not actions: no row.
    const asOperator = await fetch(`${stack.apiUrl}/v1/codec/decode`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ payloads }),
    });
    expect(asOperator.status).toBe(403);
    expect(await rowsOf(asOperator)).toEqual([]);
  });

  it('records each ops command that acts or shows a donation; dry runs and listings not', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 30_000);
    await waitForStatus(stack, id, 'CONFIRMED');
    const before = (await audit.list({ actor: 'bob' }, 1_000)).length;
    expect(before).toBe(0);

    expect((await ops('bob', 'refund', id, '--reason', 'dry', '--amount', '1000')).code).toBe(0);
    expect((await ops('bob', 'reset', id, '--to', 'last-task')).code).toBe(0);
    expect((await ops('bob', 'redeliver')).code).toBe(0);
    expect((await ops('bob', 'dead-letters')).code).toBe(0);
    expect((await ops('bob', 'audit')).code).toBe(0);
    expect(await audit.list({ actor: 'bob' }, 1_000)).toEqual([]);

    const refund = await ops('bob', 'refund', id, '--reason', 'asked', '--amount', '1000', '--yes');
    expect(refund.code).toBe(0);
    const shown = await ops('bob', 'show', id, '--json');
    expect(shown.code).toBe(0);
    const unknown = randomUUID();
    const reset = await ops('bob', 'reset', unknown, '--to', 'last-task', '--yes');
    expect(reset.code).toBe(1);
    const redeliver = await ops('bob', 'redeliver', '--older-than', '86400', '--yes');
    expect(redeliver.code).toBe(0);
    const reconcile = await ops('bob', 'reconcile', '--yes', '--json');
    expect(reconcile.code).toBe(0);

    const rows = (await audit.list({ actor: 'bob' }, 1_000)).reverse();
    const cli = { actor: { kind: 'cli', id: 'bob' }, origin: 'cli', requestId: undefined };
    expect(rows).toEqual([
      expect.objectContaining({
        ...cli,
        action: 'refund',
        donationId: id,
        workflowId: expect.stringMatching(new RegExp(`^refund-request-${id}-ops-`)) as unknown,
        detail: { amount: 1000 },
        outcome: ended({ outcome: 'succeeded', status: 0 }),
      }),
      expect.objectContaining({
        ...cli,
        action: 'show',
        donationId: id,
        outcome: ended({ outcome: 'succeeded', status: 0 }),
      }),
      expect.objectContaining({
        ...cli,
        action: 'reset',
        donationId: unknown,
        workflowId: donationWorkflowId(unknown),
        detail: { to: 'last-task' },
        outcome: ended({
          outcome: 'failed',
          status: 1,
          error: `No donation ${unknown}`,
        }),
      }),
      expect.objectContaining({
        ...cli,
        action: 'redeliver',
        detail: { olderThanSeconds: 86400, limit: 100 },
        outcome: ended({ outcome: 'succeeded', status: 0 }),
      }),
      expect.objectContaining({
        ...cli,
        action: 'reconcile',
        outcome: ended({ outcome: 'succeeded', status: 0 }),
      }),
    ]);
    expect(rows.every((row) => typeof row.address === 'string' && row.address.length > 0)).toBe(
      true,
    );
    expect(JSON.stringify(rows)).not.toContain('asked');
  });

  it('does not act when the audit row cannot be written', async () => {
    const campaignId = await createCampaign(stack.db);
    const id = await donate(stack, campaignId, 20_000);
    await waitForStatus(stack, id, 'CONFIRMED');
    // DDL on this file's own database: rows by "blocked" can no longer be written.
    await sql`ALTER TABLE audit_log ADD CONSTRAINT audit_test_blocked CHECK (actor <> 'blocked') NOT VALID`.execute(
      stack.db,
    );
    try {
      const refund = await call(
        'POST',
        `/v1/donations/${id}/refunds`,
        BLOCKED_SECRET,
        { reason: 'unrecorded' },
        'unrecorded-refund',
      );
      expect(refund.status).toBe(503);
      expect(await refund.json()).toMatchObject({
        code: 'service-unavailable',
        detail: 'The audit log cannot be written; nothing was done.',
      });
      const close = await call('POST', `/v1/campaigns/${campaignId}/close`, BLOCKED_SECRET);
      expect(close.status).toBe(503);

      const cli = await ops('blocked', 'refund', id, '--reason', 'unrecorded', '--yes');
      expect(cli.code).toBe(1);
      expect(cli.err).toMatch(/not done: the audit log cannot be written/);

      // Nothing happened: neither refund request started, the campaign still open.
      const httpKey = deriveUuid({
        clientId: 'blocked',
        method: 'POST',
        route: '/v1/donations/:id/refunds',
        key: 'unrecorded-refund',
      });
      const dry = await ops('blocked', 'refund', id, '--reason', 'unrecorded');
      const cliWorkflow = /"workflowId": "([^"]+)"/.exec(dry.out)?.[1] ?? '';
      expect(cliWorkflow).toMatch(/^refund-request-/);
      for (const workflowId of [refundRequestWorkflowId(id, httpKey), cliWorkflow]) {
        await expect(stack.temporal.workflow.getHandle(workflowId).describe()).rejects.toThrow(
          WorkflowNotFoundError,
        );
      }
      const campaign = await call('GET', `/v1/campaigns/${campaignId}`, OPERATOR_SECRET);
      expect(await campaign.json()).toMatchObject({ status: 'OPEN' });
    } finally {
      await sql`ALTER TABLE audit_log DROP CONSTRAINT audit_test_blocked`.execute(stack.db);
    }
  });

  it('lists the log newest first, filtered, a page at a time', async () => {
    const actor = `carol-${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = randomUUID();
      ids.push(id);
      // Each is a failed reset of an unknown donation: recorded all the same.
      expect((await ops(actor, 'reset', id, '--to', 'first-task', '--yes')).code).toBe(1);
    }
    const first = await ops('dave', 'audit', '--actor', actor, '--limit', '2');
    expect(first.code).toBe(0);
    const lines = first.out.split('\n');
    expect(lines[0]).toMatch(/^id\s+at\s+actor\s+action\s+on\s+from\s+outcome$/);
    expect(lines[2]).toContain(`donation=${ids[2]}`);
    expect(lines[2]).toContain(`cli:${actor}`);
    expect(lines[2]).toMatch(/failed 1 No donation/);
    expect(lines[3]).toContain(`donation=${ids[1]}`);
    const next = /--before (\d+)$/.exec(first.out)?.[1];
    expect(first.out).toContain(`npm run ops -- audit --actor ${actor} --limit 2 --before ${next}`);

    const second = await ops(
      'dave',
      'audit',
      '--actor',
      actor,
      '--limit',
      '2',
      '--before',
      next ?? '',
    );
    expect(second.out).toContain(`donation=${ids[0]}`);
    expect(second.out).not.toContain(ids[1]);
    expect(second.out).not.toMatch(/Older entries/);

    const json = await ops('dave', 'audit', '--actor', actor, '--action', 'reset', '--json');
    const doc = JSON.parse(json.out) as { entries: AuditRecord[]; before: number | null };
    expect(doc.entries.map((entry) => entry.donationId)).toEqual([...ids].reverse());
    expect(doc.before).toBeNull();
    expect((await ops('dave', 'audit', '--actor', actor, '--action', 'refund')).out).toBe(
      'No audit entries.',
    );
    expect((await ops('dave', 'audit', '--actor', actor, '--since', '1m')).out).toContain(ids[0]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await ops('dave', 'audit', '--since', future)).out).toBe('No audit entries.');
    expect((await ops('dave', 'audit', '--since', 'yesterday')).code).toBe(2);
    expect((await ops('dave', 'audit', '--action', 'frobnicate')).code).toBe(2);
  });

  it('refuses to change or delete a row, in the database itself', async () => {
    const id = await audit.record({
      actor: { kind: 'operator', id: 'mallory' },
      action: 'refund',
      origin: 'http',
      donationId: randomUUID(),
    });
    await audit.settle(id, { outcome: 'succeeded', status: 202 });
    const refusal = { code: '42501' };
    await expect(
      sql`UPDATE audit_log SET actor = 'someone-else' WHERE id = ${id}`.execute(stack.db),
    ).rejects.toMatchObject({ ...refusal, message: 'audit_log is append-only: UPDATE refused' });
    await expect(
      sql`DELETE FROM audit_log WHERE id = ${id}`.execute(stack.db),
    ).rejects.toMatchObject({ ...refusal, message: 'audit_log is append-only: DELETE refused' });
    await expect(sql`TRUNCATE audit_log CASCADE`.execute(stack.db)).rejects.toMatchObject({
      ...refusal,
      message: expect.stringMatching(/append-only: TRUNCATE refused/) as unknown,
    });
    await expect(
      sql`UPDATE audit_outcomes SET outcome = 'failed' WHERE audit_id = ${id}`.execute(stack.db),
    ).rejects.toMatchObject({
      ...refusal,
      message: 'audit_outcomes is append-only: UPDATE refused',
    });
    await expect(
      sql`DELETE FROM audit_outcomes WHERE audit_id = ${id}`.execute(stack.db),
    ).rejects.toMatchObject({
      ...refusal,
      message: 'audit_outcomes is append-only: DELETE refused',
    });
    // An outcome is written once.
    await expect(audit.settle(id, { outcome: 'failed', status: 500 })).rejects.toMatchObject({
      code: '23505',
    });
    const [row] = await audit.list({ actor: 'mallory' }, 10);
    expect(row).toMatchObject({
      id,
      actor: { id: 'mallory' },
      outcome: { outcome: 'succeeded', status: 202 },
    });
  });
});
