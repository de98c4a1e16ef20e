import { sql } from 'kysely';
import type { Db } from '../db/database';

/** A kept method a pledge let go of, still held at its provider. */
export interface KeptMethodRelease {
  provider: string;
  savedMethod: string;
  pledgeId: string;
  attempts: number;
}

/**
 * The methods pledges let go of (`kept_method_releases`, written by the trigger of migration
 * 0015 in the transaction that let go), and what releasing each at its provider came to.
 */
export class KeptMethodReleases {
  constructor(private readonly db: Db) {}

  /** Not released yet and tried fewer than `maxAttempts` times, oldest first. */
  async due(maxAttempts: number, limit: number): Promise<KeptMethodRelease[]> {
    const rows = await this.db
      .selectFrom('kept_method_releases')
      .select(['provider', 'saved_method', 'pledge_id', 'attempts'])
      .where('released_at', 'is', null)
      .where('attempts', '<', maxAttempts)
      .orderBy('let_go_at')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      provider: row.provider,
      savedMethod: row.saved_method,
      pledgeId: row.pledge_id,
      attempts: row.attempts,
    }));
  }

  /**
   * Marks it released; false if another run (an operator's beside the schedule) marked it
   * first, whose time stays.
   */
  async released(release: KeptMethodRelease): Promise<boolean> {
    const row = await this.db
      .updateTable('kept_method_releases')
      .set({ released_at: sql`now()`, last_error: null })
      .where('provider', '=', release.provider)
      .where('saved_method', '=', release.savedMethod)
      .where('released_at', 'is', null)
      .returning('pledge_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Counts a failed attempt; the attempts it has made now. */
  async failed(release: KeptMethodRelease, error: string): Promise<number> {
    const row = await this.db
      .updateTable('kept_method_releases')
      .set({ attempts: sql`attempts + 1`, last_error: error.slice(0, 1000) })
      .where('provider', '=', release.provider)
      .where('saved_method', '=', release.savedMethod)
      .where('released_at', 'is', null)
      .returning('attempts')
      .executeTakeFirst();
    return row?.attempts ?? release.attempts;
  }
}
