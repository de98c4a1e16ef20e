import { rmSync } from 'node:fs';
import { FAULTS, FAULT_KINDS, runChaos } from './soak/soak-chaos';
import type { FaultKind } from './soak/soak-chaos';
import { LmdbDisk } from './soak/lmdb-disk';
import { SoakRecord, runDonor, runRefunder } from './soak/soak-donors';
import { balancerInvariant, checkInvariants, everythingEnded } from './soak/soak-invariants';
import type { InvariantResult } from './soak/soak-invariants';
import { printReport } from './soak/soak-report';
import { sleep, waitFor } from './stack/commands';
import { startProductionStack } from './stack/production-stack';
import { StackClient } from './stack/stack-client';

/** A whole number from the environment, or the default. */
function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

/** `SOAK_FAULTS=api,lmdb-disk,…` (the keys of {@link FAULTS}): only these; all when unset. */
function faultKinds(): FaultKind[] {
  const names = (process.env.SOAK_FAULTS ?? '').split(',').filter(Boolean);
  if (names.length === 0) return FAULT_KINDS;
  return names.map((name) => {
    const kind = (FAULTS as Record<string, FaultKind | undefined>)[name];
    if (!kind)
      throw new Error(`SOAK_FAULTS: no fault "${name}" (${Object.keys(FAULTS).join(', ')})`);
    return kind;
  });
}

const PAYMENT_TIMEOUT_SECONDS = 60;

/**
 * `npm run soak` (SOAK_MINUTES, default 10; SOAK_DONORS, default 4; CHAOS_INTERVAL_SECONDS,
 * default 15; SOAK_FAULTS, default all): closed-loop donors, provider and operator refunds on the production-shaped
 * stack (two API nodes behind nginx) with PostgreSQL servers of its own, while a chaos loop kills
 * and restarts its parts, fills the LMDB disk and drops a node. Then it waits for every donation to end and checks the money.
 */
async function main(): Promise<void> {
  const minutes = setting('SOAK_MINUTES', 10);
  const donors = setting('SOAK_DONORS', 4);
  const intervalMs = setting('CHAOS_INTERVAL_SECONDS', 15) * 1_000;
  const kinds = faultKinds();
  const say = (line: string) => process.stdout.write(`${line}\n`);
  let disk: LmdbDisk | undefined;
  const stack = await startProductionStack({
    log: say,
    ownPostgres: true,
    // Two hosts behind deploy/nginx.conf, so a node can be dropped.
    apiNodes: 2,
    prepareLmdb: (dir) => {
      disk = new LmdbDisk(dir, 64);
      disk.mount();
    },
    env: {
      PAYMENT_TIMEOUT_SECONDS: String(PAYMENT_TIMEOUT_SECONDS),
      RECONCILE_INTERVAL_SECONDS: '30',
      RECONCILE_GRACE_SECONDS: '30',
    },
  });
  const client = new StackClient(stack);
  let results: InvariantResult[] = [];
  try {
    if (!disk) throw new Error('the LMDB disk was not mounted');
    const campaignId = `soak-${stack.id}`;
    await waitFor(
      'campaign created',
      async () => ((await client.createCampaign(campaignId)).status === 201 ? true : undefined),
      60_000,
    );
    const record = new SoakRecord();
    let endsAt = Date.now() + minutes * 60_000;
    const stopped = () => Date.now() >= endsAt;
    // Ctrl-C ends the load early; the checks and the teardown still run.
    process.once('SIGINT', () => {
      endsAt = Date.now();
    });
    const options = { client, campaignId, record, stopped };
    const refunds: string[] = [];
    say(`Soak: ${minutes} min, ${donors} donors, a fault every ${intervalMs / 1000} s`);
    const started = Date.now();
    const load = Promise.all(
      Array.from({ length: donors }, (_, donor) =>
        runDonor(donor, options, (id) => refunds.push(id)),
      ),
    );
    let loadDone = false;
    const refunder = runRefunder(refunds, options, () => loadDone);
    const chaos = runChaos({
      stack,
      disk,
      intervalMs,
      diskFullMs: 15_000,
      nodeDownMs: 20_000,
      stopped,
      kinds,
      log: say,
    });
    await load;
    loadDone = true;
    const loadSeconds = (Date.now() - started) / 1000;
    const faults = await chaos;
    await refunder;
    say('Load stopped; waiting for every donation to end and the money to settle…');
    const settleStarted = Date.now();
    await waitFor(
      'every donation ended and the money agreeing',
      async () => {
        if (!(await everythingEnded(client, campaignId))) return undefined;
        results = await checkInvariants(client, campaignId, record);
        return results.every((result) => result.ok) ? true : undefined;
      },
      (PAYMENT_TIMEOUT_SECONDS + 300) * 1_000,
      2_000,
    ).catch(async () => {
      results = await checkInvariants(client, campaignId, record).catch((error: unknown) => [
        { name: 'the stack answers the final checks', ok: false, detail: String(error) },
      ]);
    });
    results.unshift(balancerInvariant(record));
    const unrecovered = [...faults.unrecovered.values()].reduce((sum, n) => sum + n, 0);
    results.push({
      name: 'every broken part came back',
      ok: unrecovered === 0,
      detail: `${unrecovered} faults were not recovered from`,
    });
    printReport(say, {
      record,
      loadSeconds,
      settleSeconds: (Date.now() - settleStarted) / 1000,
      faults: FAULT_KINDS.map((kind) => [
        kind,
        faults.injected.get(kind) ?? 0,
        faults.unrecovered.get(kind) ?? 0,
      ]),
      restarts: [...stack.processes.values()].map((part) => [part.spec.name, part.restarts]),
      results,
    });
  } finally {
    await client.close();
    await sleep(0);
    const failed = results.length === 0 || results.some((result) => !result.ok);
    await stack.stop({ keepFiles: true });
    disk?.unmount();
    if (failed) say(`Files kept in ${stack.dir}`);
    else rmSync(stack.dir, { recursive: true, force: true });
  }
  if (results.some((result) => !result.ok)) process.exitCode = 1;
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
