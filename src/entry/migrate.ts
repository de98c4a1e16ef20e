import { openDatabase } from '../runtime/open-resources';
import { runEntry } from '../runtime/entry';

/** `npm run migrate`: create the database if missing and apply pending migrations. */
runEntry('migrate', async (config, log) => {
  const db = await openDatabase(config, 1);
  await db.destroy();
  log.info('database migrated');
  process.exit(0);
});
