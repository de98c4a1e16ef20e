import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { defaultClaimsPath, removeStoreFiles } from '../src/idempotency/claims-location';
import { IdempotencyStore } from '../src/idempotency/idempotency-store';
import { BENCH_KEY, BENCH_SECRET, benchBody } from './bench-servers';
import { mean, measureOps, measureServer, percentiles } from './measure';
import type { HttpResult, OpResult } from './measure';

/**
 * `npm run bench:idempotency`: the edge's idempotency layer against its baselines, all in one
 * run on this machine. Prints markdown for docs/benchmarks.md. Needs Postgres and Redis.
 */
const out: string[] = [];
const say = (line = '') => {
  out.push(line);
  process.stdout.write(`${line}\n`);
};
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const ms = (n: number) => `${n.toFixed(3)} ms`;
const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 50);
const PIPELINING = Number(env.BENCH_PIPELINING ?? 1);
const ONE_MILLION = Number(env.BENCH_KEYS ?? 1_000_000);
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);

function fsyncLatency(): { p50: number; p99: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'galang-fsync-'));
  const fd = openSync(path.join(dir, 'probe'), 'w');
  const samples: number[] = [];
  const block = Buffer.alloc(4096, 1);
  for (let i = 0; i < 200; i++) {
    writeSync(fd, block, 0, block.length, 0);
    const t0 = process.hrtime.bigint();
    fsyncSync(fd);
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
  return percentiles(samples);
}

async function routeBenchmark(): Promise<void> {
  say('## Full route: replay of a completed key vs a bare Fastify POST route');
  say();
  const body = JSON.stringify(benchBody);
  const rows: [string, HttpResult][] = [];
  const kinds = Array.from({ length: ROUNDS }, () => ['bare', 'full']).flat();
  for (const kind of kinds) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (kind === 'full') {
      headers.authorization = `Bearer ${BENCH_SECRET}`;
      headers['idempotency-key'] = BENCH_KEY;
    }
    const result = await measureServer(kind, {}, '/v1/donations', {
      headers,
      body,
      connections: CONNECTIONS,
      pipelining: PIPELINING,
      seconds: SECONDS,
    });
    rows.push([kind, result]);
  }
  say('| server | round | req/s | p50 | p99 | non-2xx |');
  say('| --- | --- | --- | --- | --- | --- |');
  rows.forEach(([kind, r], i) => {
    say(
      `| ${kind} | ${Math.floor(i / 2) + 1} | ${fmt(r.requestsPerSecond)} | ${r.p50} ms | ${r.p99} ms | ${r.non2xx} |`,
    );
  });
  const avg = (kind: string) =>
    mean(rows.filter(([k]) => k === kind).map(([, r]) => r.requestsPerSecond));
  say();
  say(
    `**Replay / bare = ${(avg('full') / avg('bare')).toFixed(2)}×** (target ≥ 0.85×; means of ${String(ROUNDS)} alternating rounds).`,
  );
  say();
}

async function storeBenchmark(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'galang-bench-store-'));
  const store = new IdempotencyStore({ path: dir, ttlSeconds: 86_400 });
  // The same store with its claims on disk, flushed like the answers: what memory saves.
  const flushedDir = mkdtempSync(path.join(os.tmpdir(), 'galang-bench-flushed-'));
  const flushedClaims = path.join(flushedDir, 'claims');
  const flushed = new IdempotencyStore({
    path: flushedDir,
    claimsPath: flushedClaims,
    ttlSeconds: 86_400,
  });
  const redis = new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    keyPrefix: `galang-bench:${process.pid}:`,
  });
  const admin = new pg.Client({
    connectionString: env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  });
  await admin.connect();
  const database = `galang_bench_${process.pid}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const pool = new pg.Pool({
    connectionString: `postgres://postgres@127.0.0.1:5432/${database}`,
    max: 20,
  });
  pool.on('error', () => undefined);
  await pool.query(
    'CREATE TABLE idem (key text PRIMARY KEY, record jsonb NOT NULL, expires_at timestamptz NOT NULL)',
  );
  const record = JSON.stringify({
    status: 'IN_FLIGHT',
    fingerprint: 'x'.repeat(43),
    owner: { pid: 1, claimId: 'c' },
  });

  try {
    say('## Store level: claims');
    say();
    say(
      `Each claim inserts a new key only if absent. LMDB as shipped: one conditional write into the claims' environment (${store.claimsInMemory ? 'in shared memory, commits not flushed' : 'on disk, commits flushed: no shared memory here'}), awaited until committed and visible to every process, then one read of the answers; Redis: \`SET key value NX EX 86400\`; Postgres: \`INSERT … ON CONFLICT DO NOTHING RETURNING\` into a keyed table (pool of 20 connections).`,
    );
    say();
    say('| store | in flight | round | claims/s | p50 | p99 |');
    say('| --- | --- | --- | --- | --- | --- |');
    const meanAtHundred = new Map<string, number>();
    for (const inFlight of [1, 100]) {
      const n = inFlight === 1 ? 5_000 : 50_000;
      const contenders: [string, number, (key: string) => Promise<unknown>][] = [
        ['lmdb', n, (key) => store.claim(key, 'fp')],
        ['lmdb, claims flushed', n, (key) => flushed.claim(key, 'fp')],
        ['redis', n, (key) => redis.set(key, record, 'EX', 86_400, 'NX')],
        [
          'postgres',
          n / 5,
          (key) =>
            pool.query(
              "INSERT INTO idem VALUES ($1, $2, now() + interval '1 day') ON CONFLICT DO NOTHING RETURNING key",
              [key, record],
            ),
        ],
      ];
      // Rounds alternate the stores, so a noisy neighbour on this shared VM hits all of them.
      const rates = new Map<string, number[]>();
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [name, count, op] of contenders) {
          // The same keys in every store, so the replay reads below find them in all three.
          const r = await measureOps(count, inFlight, (i) =>
            op(`c${String(round)}-${String(inFlight)}-${String(i)}`),
          );
          rates.set(name, [...(rates.get(name) ?? []), r.opsPerSecond]);
          say(
            `| ${name} | ${inFlight} | ${round} | ${fmt(r.opsPerSecond)} | ${ms(r.p50)} | ${ms(r.p99)} |`,
          );
        }
      }
      if (inFlight === 100) {
        for (const [name, values] of rates) meanAtHundred.set(name, mean(values));
      }
    }
    const lmdb = meanAtHundred.get('lmdb') ?? 0;
    const ratioTo = (name: string) => lmdb / (meanAtHundred.get(name) ?? 1);
    say();
    say(
      `At 100 in flight, means of ${String(ROUNDS)} alternating rounds: LMDB ${fmt(lmdb)}/s (claims flushed to disk: ${fmt(meanAtHundred.get('lmdb, claims flushed') ?? 0)}/s), Redis ${fmt(meanAtHundred.get('redis') ?? 0)}/s, Postgres ${fmt(meanAtHundred.get('postgres') ?? 0)}/s. **LMDB / Redis = ${ratioTo('redis').toFixed(2)}×** (target ≥ 1), **LMDB / Postgres = ${ratioTo('postgres').toFixed(1)}×** (target ≥ 10).`,
    );
    say();

    say('## Store level: replay reads');
    say();
    say('| store | reads/s (1 in flight) | p50 | p99 |');
    say('| --- | --- | --- | --- |');
    const reads: [string, OpResult][] = [
      ['lmdb', await measureOps(200_000, 1, (i) => store.get(`c1-100-${String(i % 50_000)}`))],
      ['redis', await measureOps(20_000, 1, (i) => redis.get(`c1-100-${String(i % 50_000)}`))],
      [
        'postgres',
        await measureOps(5_000, 1, (i) =>
          pool.query('SELECT record FROM idem WHERE key = $1', [`c1-100-${String(i % 10_000)}`]),
        ),
      ],
    ];
    for (const [name, r] of reads) {
      say(`| ${name} | ${fmt(r.opsPerSecond)} | ${ms(r.p50)} | ${ms(r.p99)} |`);
    }
    const rate = (name: string) => reads.find(([n]) => n === name)?.[1].opsPerSecond ?? 1;
    say();
    say(`**LMDB / Redis = ${(rate('lmdb') / rate('redis')).toFixed(0)}×** (target ≥ 20).`);
    say();
  } finally {
    await store.close();
    await flushed.close();
    removeStoreFiles(dir);
    removeStoreFiles(flushedDir, flushedClaims);
    const keys = await redis.keys('*');
    for (let i = 0; i < keys.length; i += 1000) {
      await redis.del(
        ...keys.slice(i, i + 1000).map((k) => k.replace(`galang-bench:${process.pid}:`, '')),
      );
    }
    redis.disconnect();
    await pool.end();
    await admin.query(`DROP DATABASE ${database} WITH (FORCE)`);
    await admin.end();
  }
}

async function steadyStateBenchmark(): Promise<void> {
  say(`## ${fmt(ONE_MILLION)} keys through a short TTL with the sweeper running`);
  say();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'galang-bench-steady-'));
  const ttlSeconds = 2;
  const store = new IdempotencyStore({
    path: dir,
    ttlSeconds,
    leaseSeconds: 1,
    inFlightGraceSeconds: 0,
  });
  let swept = 0;
  let sweep: Promise<void> | undefined;
  const timer = setInterval(() => {
    sweep ??= store.sweepAll(5_000).then((r) => {
      swept += r.removed;
      sweep = undefined;
    });
  }, 250);
  const response = {
    statusCode: 202,
    headers: { 'content-type': 'application/json' },
    body: '{"id":"1b4e28ba-2fa1-81d2-883f-0016d3cca427","status":"PENDING"}',
  };
  const claimsFile = path.join(defaultClaimsPath(dir), 'data.mdb');
  say('| keys done | answers data.mdb | claims data.mdb | live records | elapsed |');
  say('| --- | --- | --- | --- | --- |');
  const started = Date.now();
  const checkpoints = new Set([0.25, 0.5, 0.75, 1].map((q) => Math.floor(q * ONE_MILLION)));
  let done = 0;
  await measureOps(ONE_MILLION, 100, async (i) => {
    const claim = await store.claim(`k-${i}`, 'fp');
    if (claim.outcome === 'claimed') await store.complete(`k-${i}`, claim.claimId, response);
    done++;
    if (checkpoints.has(done)) {
      const mib = (file: string) => `${fmt(statSync(file).size / 1024 / 1024, 1)} MiB`;
      say(
        `| ${fmt(done)} | ${mib(path.join(dir, 'data.mdb'))} | ${mib(claimsFile)} | ${fmt(store.stats().records)} | ${fmt((Date.now() - started) / 1000, 1)} s |`,
      );
    }
  });
  clearInterval(timer);
  await sweep;
  const rate = ONE_MILLION / ((Date.now() - started) / 1000);
  say();
  say(
    `Claim + complete (flushed) at 100 in flight: ${fmt(rate)} keys/s; TTL ${ttlSeconds} s, so the live set is about ${fmt(rate * ttlSeconds)} keys; swept during the run: ${fmt(swept)}. Peak RSS of the benchmark process: ${fmt(process.resourceUsage().maxRSS / 1024)} MiB.`,
  );
  say();
  await store.close();
  removeStoreFiles(dir);
}

async function main(): Promise<void> {
  const fsync = fsyncLatency();
  say('# Idempotency benchmark');
  say();
  say(
    `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${fmt(os.totalmem() / 2 ** 30)} GiB. fsync of a 4 KiB write on the data disk: p50 ${ms(fsync.p50)}, p99 ${ms(fsync.p99)}. autocannon: ${CONNECTIONS} connections, pipelining ${PIPELINING}, ${SECONDS} s per run after a 2 s warm-up; servers run in their own process.`,
  );
  say();
  await routeBenchmark();
  await storeBenchmark();
  await steadyStateBenchmark();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
