import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import QRCode from 'qrcode';
import type { BrowserContext, Page } from 'playwright-core';
import { CampaignRepository } from '../../src/campaigns/campaign-repository';
import { startMailSink } from '../../src/mail/mail-sink';
import type { MailSink } from '../../src/mail/mail-sink';
import { ScheduleNotFoundError } from '@temporalio/client';
import { pledgeScheduleId } from '../../workflows/contracts';
import { freePort } from '../support/free-port';
import { createOwnDatabase } from '../support/own-database';
import type { OwnDatabase } from '../support/own-database';
import { runReceipts } from '../support/mail-stack';
import { startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it). */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/**
 * The campaign page in a real browser against the real stack, as a donor uses it: a double
 * click on Donate makes one donation under one Idempotency-Key, its QR is drawn once, the
 * payment settles, the progress bar moves by the amount, the donor wall shows it and, once
 * numbered, its receipt's PDF is linked. SCREENSHOT_PATH=docs/campaign-page.png also writes the
 * README's picture of the final page.
 */
describe('the campaign page, in Chromium', () => {
  let stack: Stack;
  let database: OwnDatabase;
  let sink: MailSink;
  let context: BrowserContext | undefined;
  let page: Page;
  let outputDir: string;
  const problems: string[] = [];

  beforeAll(async () => {
    outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'galang-page-'));
    // The receipts writer numbers every queued confirmation of its database: on the shared one
    // it would number (and mail) other files' donations under this stack's prefix.
    database = await createOwnDatabase('campaign_page');
    sink = await startMailSink({ host: '127.0.0.1', port: 0, dir: path.join(outputDir, 'mail') });
    // The simulator never settles on its own: the page's "simulate payment" button does.
    stack = await startStack({
      autoPayMs: -1,
      simulatorPort: await freePort(),
      databaseUrl: database.url,
      env: { SMTP_URL: `smtp://127.0.0.1:${sink.port}` },
    });
    context = await chromium.launchPersistentContext(path.join(outputDir, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 900, height: 1100 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    // A Content-Security-Policy violation, a script error or a failed request is a failure,
    // except the 409 a second click's POST may get while the first one holds its key.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
        problems.push(`console: ${message.text()}`);
      }
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('response', (response) => {
      const request = response.request();
      const retried = response.status() === 409 && request.url().endsWith('/v1/donations');
      if (response.status() >= 400 && !retried) {
        problems.push(`${request.method()} ${request.url()}: ${response.status()}`);
      }
    });
  }, 120_000);
  afterAll(async () => {
    await context?.close();
    await stack.stop();
    await sink.stop();
    await database.drop();
  });

  /** Runs a test body; on failure saves what the browser showed and says where. */
  async function withScreenshotOnFailure(body: () => Promise<void>): Promise<void> {
    try {
      await body();
    } catch (error) {
      const file = path.join(outputDir, `failure-${Date.now()}.png`);
      await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
      process.stderr.write(`campaign page test failed; screenshot: ${file}\n`);
      throw error;
    }
  }

  it('takes a double-clicked donation once, shows its QR and moves the bar when paid', async () => {
    await withScreenshotOnFailure(async () => {
      const campaignId = `page-${randomUUID().slice(0, 8)}`;
      await new CampaignRepository(stack.db).create({
        id: campaignId,
        title: 'Clean water for Desa Sukamaju',
        goalAmount: 400_000,
        currency: 'IDR',
      });
      const posts: (string | undefined)[] = [];
      page.on('request', (request) => {
        if (request.method() === 'POST' && request.url().endsWith('/v1/donations')) {
          posts.push(request.headers()['idempotency-key']);
        }
      });

      const response = await page.goto(`${stack.apiUrl}/campaigns/${campaignId}`);
      expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
      await page.getByRole('heading', { name: 'Clean water for Desa Sukamaju' }).waitFor();
      const progressShows = (amount: number, timeout = 10_000) =>
        page.locator(`#progress[data-confirmed-amount="${amount}"]`).waitFor({ timeout });
      const statusIs = (status: string, timeout: number) =>
        page.locator(`#d-status[data-status="${status}"]`).waitFor({ timeout });
      await progressShows(0);
      await page.locator('#wall[data-count="0"]').waitFor();
      expect(await page.locator('#wall-empty').isVisible()).toBe(true);
      // Presets are formatted for Indonesia, in whole rupiah (IDR has no minor units).
      const preset = page.locator('label', { has: page.locator('input[value="100000"]') });
      expect((await preset.innerText()).replace(/\s/g, ' ')).toBe('Rp 100.000');

      await preset.click();
      await page.getByLabel('Name').fill('Ani');
      await page.getByLabel('Email').fill('ani@example.com');
      await page.getByLabel('Message').fill('Semangat! https://spam.example.xyz/promo');
      await page.locator('#submit').dblclick();

      await statusIs('AWAITING_PAYMENT', 20_000);
      const rows = await stack.db
        .selectFrom('donations')
        .select(['id', 'payment_action', 'amount'])
        .where('campaign_id', '=', campaignId)
        .execute();
      expect(rows).toHaveLength(1);
      const donation = rows[0];
      // Both clicks were sent, with one key: the API made one donation of them.
      expect(posts.length).toBeGreaterThanOrEqual(2);
      expect(new Set(posts).size).toBe(1);
      expect(await page.locator('#d-key').textContent()).toBe(posts[0]);

      const qr = page.locator('#pay img');
      await qr.waitFor();
      expect(await qr.count()).toBe(1);
      // The page asks for the donation's own QR code; the API draws its stored QR string.
      expect(await qr.getAttribute('src')).toBe(`/demo/donations/${donation?.id}/qr.svg`);
      const drawn = await (
        await fetch(`${stack.apiUrl}/demo/donations/${donation?.id}/qr.svg`)
      ).text();
      expect(drawn).toBe(
        await QRCode.toString((donation?.payment_action as { value: string }).value, {
          type: 'svg',
          margin: 2,
        }),
      );
      expect(
        await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      ).toBeGreaterThan(0);

      await page.getByRole('button', { name: 'Simulate payment' }).click();
      await statusIs('CONFIRMED', 30_000);
      expect(donation?.amount).toBe(100_000);
      await progressShows(100_000, 15_000);
      expect(await page.locator('#fill').getAttribute('style')).toBe('width: 25%;');
      expect(await page.locator('#pay img').count()).toBe(1);
      // The wall polls like the bar: the confirmed donation appears, its link removed, as text.
      await page.locator('#wall[data-count="1"]').waitFor({ timeout: 15_000 });
      const entry = page.locator('#wall-list li');
      expect(await entry.locator('.wall-name').textContent()).toBe('Ani');
      expect((await entry.innerText()).replace(/\s/g, ' ')).toContain('Rp 100.000');
      expect(await entry.locator('.wall-message').textContent()).toBe('Semangat! [link removed]');
      expect(await entry.locator('a').count()).toBe(0);
      expect(await page.locator('#wall-empty').isVisible()).toBe(false);
      const donationsNow = await stack.db
        .selectFrom('donations')
        .select('id')
        .where('campaign_id', '=', campaignId)
        .execute();
      expect(donationsNow).toEqual([{ id: donation?.id }]);

      // The test stack has no receipts schedule: the writer runs here, and the page, which
      // asks for the receipt once a second after the confirmation, links its PDF.
      await runReceipts(stack);
      const receipt = page.locator('#receipt-link');
      await receipt.waitFor({ timeout: 15_000 });
      expect(await receipt.textContent()).toMatch(/^Receipt [A-Z0-9]{2,8}-\d{4}-\d{6} \(PDF\)$/);
      expect(await receipt.getAttribute('target')).toBe('_blank');
      expect(await receipt.getAttribute('rel')).toBe('noopener');
      // Relative to the page's origin, whatever PUBLIC_URL names.
      const href = (await receipt.getAttribute('href')) ?? '';
      expect(href).toMatch(/^\/v1\/receipts\/[A-Z0-9-]+\.pdf\?token=/);
      const pdf = await fetch(new URL(href, page.url()));
      expect(pdf.status).toBe(200);
      expect(pdf.headers.get('content-type')).toBe('application/pdf');
      expect(
        Buffer.from(await pdf.arrayBuffer())
          .subarray(0, 5)
          .toString('latin1'),
      ).toBe('%PDF-');

      const workflow = page.getByRole('link', { name: /workflow in the Temporal UI/ });
      expect(await workflow.getAttribute('href')).toBe(
        `${stack.config.temporal.uiUrl}/namespaces/default/workflows/donation-${donation?.id}`,
      );
      expect(problems).toEqual([]);

      const screenshot = process.env.SCREENSHOT_PATH;
      if (screenshot) {
        // The bar eases to its width: the picture shows where it ends.
        await page.evaluate('Promise.all(document.getAnimations().map((a) => a.finished))');
        await page.screenshot({ path: path.resolve(screenshot), fullPage: true });
        process.stderr.write(`campaign page screenshot: ${path.resolve(screenshot)}\n`);
      }
    });
  }, 120_000);

  it('gives monthly: charges the first month at once, and the donor cancels by their link', async () => {
    await withScreenshotOnFailure(async () => {
      const campaignId = `page-${randomUUID().slice(0, 8)}`;
      await new CampaignRepository(stack.db).create({
        id: campaignId,
        title: 'School books for Desa Sukamaju',
        goalAmount: 400_000,
        currency: 'IDR',
      });
      await page.goto(`${stack.apiUrl}/campaigns/${campaignId}`);
      await page.getByRole('heading', { name: 'School books for Desa Sukamaju' }).waitFor();
      await page.locator('label', { has: page.locator('input[value="50000"]') }).click();
      await page.getByLabel('Name').fill('Budi');
      await page.getByLabel('Email').fill('budi@example.com');
      await page.getByLabel('Give this every month').check();
      await page.locator('#submit').click();

      await page.locator('#p-status[data-status="ACTIVE"]').waitFor({ timeout: 20_000 });
      await page.locator('#d-status[data-status="AWAITING_PAYMENT"]').waitFor({ timeout: 20_000 });
      const pledge = await stack.db
        .selectFrom('pledges')
        .selectAll()
        .where('campaign_id', '=', campaignId)
        .executeTakeFirstOrThrow();
      expect(pledge).toMatchObject({ amount: 50_000, frequency: 'monthly', status: 'ACTIVE' });
      const periods = await stack.db
        .selectFrom('pledge_periods')
        .select('donation_id')
        .where('pledge_id', '=', pledge.id)
        .execute();
      expect(periods).toHaveLength(1);

      await page.getByRole('button', { name: 'Cancel the monthly gift' }).click();
      await page.locator('#p-status[data-status="CANCELLED"]').waitFor({ timeout: 15_000 });
      expect(await page.getByRole('button', { name: 'Cancel the monthly gift' }).isVisible()).toBe(
        false,
      );
      const after = await stack.db
        .selectFrom('pledges')
        .select('status')
        .where('id', '=', pledge.id)
        .executeTakeFirstOrThrow();
      expect(after.status).toBe('CANCELLED');
      await expect(
        stack.temporal.schedule.getHandle(pledgeScheduleId(pledge.id)).describe(),
      ).rejects.toBeInstanceOf(ScheduleNotFoundError);
      expect(problems).toEqual([]);
    });
  }, 120_000);
});
