import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Db } from '../../src/db/database';
import { EncryptionCodec } from '../../src/temporal/payload-codec';
import type { Stack } from './stack';

/**
 * Where a donor's data could stay behind after an erasure, each read as raw as the test can:
 * the files of every relation of the database, every key of Redis, every file of LMDB, every
 * history of the stack's task queue (as stored, and decoded with the codec's keys).
 * Each probe returns the names of the places that still hold one of `needles`.
 */
export type Needles = readonly string[];

const holds = (bytes: Buffer, needles: Needles) =>
  needles.some((needle) => bytes.includes(Buffer.from(needle)));

/**
 * Every relation of the database (tables, indexes, TOAST, catalogs such as pg_statistic) read
 * from its file after a VACUUM FULL, which rewrites each table without its dead row versions.
 * `pg_read_binary_file` needs a superuser, as the tests' role is.
 */
export async function postgresFilesHolding(db: Db, needles: Needles): Promise<string[]> {
  await sql`VACUUM FULL`.execute(db);
  const relations = await sql<{ name: string; file: string }>`
    SELECT c.oid::regclass::text AS name, pg_relation_filepath(c.oid) AS file
      FROM pg_class c
     WHERE c.relkind IN ('r', 'i', 't', 'm') AND pg_relation_filepath(c.oid) IS NOT NULL
       AND c.relisshared = false`.execute(db);
  const found: string[] = [];
  for (const { name, file } of relations.rows) {
    const read = await sql<{ bytes: Buffer | null }>`
      SELECT pg_read_binary_file(${file}, 0, pg_relation_size(${name}::regclass), true) AS bytes
    `.execute(db);
    const bytes = read.rows[0]?.bytes;
    if (bytes && holds(bytes, needles)) found.push(name);
  }
  return found;
}

/** Every row of every table of the public schema, as text: what SQL shows. */
export async function postgresRowsHolding(db: Db, needles: Needles): Promise<string[]> {
  const tables = await sql<{ name: string }>`
    SELECT quote_ident(table_name) AS name FROM information_schema.tables
     WHERE table_schema = 'public'`.execute(db);
  const found: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await sql<{ row: string }>`SELECT t::text AS row FROM ${sql.raw(name)} t`.execute(
      db,
    );
    if (rows.rows.some(({ row }) => needles.some((needle) => row.includes(needle)))) {
      found.push(name);
    }
  }
  return found;
}

/** Every key under the stack's prefix, read by its type. */
export async function redisKeysHolding(stack: Stack, needles: Needles): Promise<string[]> {
  const { redis } = stack;
  const prefix = redis.options.keyPrefix ?? '';
  const found: string[] = [];
  for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 })) {
    for (const full of keys as string[]) {
      const key = full.slice(prefix.length);
      const type = await redis.type(key);
      const value =
        type === 'string'
          ? await redis.get(key)
          : type === 'hash'
            ? JSON.stringify(await redis.hgetall(key))
            : type === 'list'
              ? JSON.stringify(await redis.lrange(key, 0, -1))
              : type === 'set'
                ? JSON.stringify(await redis.smembers(key))
                : type === 'zset'
                  ? JSON.stringify(await redis.zrange(key, 0, -1))
                  : '';
      if (value && needles.some((needle) => value.includes(needle))) found.push(key);
    }
  }
  return found;
}

/** Every file under the idempotency store's folders (answers on disk, claims in memory). */
export function lmdbFilesHolding(stack: Stack, needles: Needles): string[] {
  const files = (dir: string): string[] =>
    !existsSync(dir)
      ? []
      : readdirSync(dir).flatMap((name) => {
          const file = path.join(dir, name);
          return statSync(file).isDirectory() ? files(file) : [file];
        });
  return [stack.config.lmdbPath, stack.config.lmdbClaimsPath]
    .flatMap(files)
    .filter((file) => holds(readFileSync(file), needles));
}

/**
 * Every workflow of the stack's task queue, its whole history as stored and with every payload
 * decoded by the codec's keys: the workflow IDs whose history holds a needle either way.
 */
export async function historiesHolding(stack: Stack, needles: Needles): Promise<string[]> {
  const codec = new EncryptionCodec(stack.config.temporal.payloadKeys);
  const found: string[] = [];
  const query = `TaskQueue = '${stack.config.temporal.taskQueue}'`;
  for await (const execution of stack.temporal.workflow.list({ query })) {
    const events: temporal.api.history.v1.IHistoryEvent[] = [];
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await stack.temporal.workflowService.getWorkflowExecutionHistory({
        namespace: stack.config.temporal.namespace,
        execution: { workflowId: execution.workflowId, runId: execution.runId },
        ...(nextPageToken && { nextPageToken }),
      });
      events.push(...(page.history?.events ?? []));
      nextPageToken = page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
    } while (nextPageToken);
    const stored = Buffer.from(temporal.api.history.v1.History.encode({ events }).finish());
    const decoded = await codec.decode(payloadsIn(events));
    const plain = Buffer.concat(decoded.map((payload) => Buffer.from(payload.data ?? [])));
    if (holds(stored, needles) || holds(plain, needles)) found.push(execution.workflowId);
  }
  return found;
}

/** Every payload object in a decoded history. */
function payloadsIn(node: unknown, found: Payload[] = []): Payload[] {
  if (Array.isArray(node)) for (const child of node) payloadsIn(child, found);
  else if (node && typeof node === 'object' && !(node instanceof Uint8Array)) {
    const record = node as Record<string, unknown>;
    if (record.data instanceof Uint8Array && typeof record.metadata === 'object') {
      found.push(record);
    }
    for (const value of Object.values(record)) payloadsIn(value, found);
  }
  return found;
}
