import type { KyselyPlugin, PluginTransformQueryArgs, RootOperationNode } from 'kysely';
import type { Db } from '../../src/db/database';

/**
 * Counts the queries a Kysely instance sends to Postgres, by the tables they name, so a test can
 * tell how many times a cache let a read through.
 */
export class QueryCounter implements KyselyPlugin {
  private readonly counts = new Map<string, number>();

  /** The same pool, seen through this counter. */
  wrap(db: Db): Db {
    return db.withPlugin(this);
  }

  count(table: string): number {
    return this.counts.get(table) ?? 0;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    for (const table of tablesOf(args.node)) {
      this.counts.set(table, (this.counts.get(table) ?? 0) + 1);
    }
    return args.node;
  }

  transformResult: KyselyPlugin['transformResult'] = (args) => Promise.resolve(args.result);
}

/** Every table a query node names, found by walking the node tree. */
function tablesOf(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) {
    for (const child of node) tablesOf(child, found);
  } else if (node && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    if (record.kind === 'IdentifierNode' && typeof record.name === 'string') {
      // Identifiers include columns too; callers ask for table names, which do not collide.
      found.add(record.name);
    }
    for (const value of Object.values(record)) tablesOf(value, found);
  }
  return found;
}
