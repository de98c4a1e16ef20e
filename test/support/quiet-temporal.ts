import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { LogEntry } from '@temporalio/worker';

/**
 * Workers in tests print warnings and errors only (INFO lines for every state change drown the
 * report), but every entry is kept, so a test can look for what an activity logged.
 */
export const temporalLogs: LogEntry[] = [];
(globalThis as { galangTemporalLogs?: LogEntry[] }).galangTemporalLogs = temporalLogs;

Runtime.install({
  logger: new DefaultLogger('INFO', (entry) => {
    temporalLogs.push(entry);
    if (entry.level === 'WARN' || entry.level === 'ERROR') {
      process.stderr.write(
        `[temporal ${entry.level}] ${entry.message} ${JSON.stringify(entry.meta ?? {})}\n`,
      );
    }
  }),
});
