import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startMailSink } from '../../src/mail/mail-sink';
import { receiptsTaskQueue } from '../../src/receipts/receipt-workflows';
import { WorkflowType } from '../../workflows/contracts';
import type { ReceiptsReport, ReceiptsWorkflow } from '../../workflows/contracts';
import type { MailSink } from '../../src/mail/mail-sink';
import { createOwnDatabase } from './own-database';
import type { OwnDatabase } from './own-database';
import { startStack } from './stack';
import type { Stack, StackOptions } from './stack';

export interface MailStack {
  stack: Stack;
  sink: MailSink;
  /** Stops the stack and the sink, and drops the database. */
  stop: () => Promise<void>;
}

/**
 * A stack on a database of its own (the receipt writer numbers every queued entry of its
 * database) whose mail goes over real SMTP to a sink that saves each message.
 */
export async function startMailStack(
  label: string,
  options: StackOptions = {},
): Promise<MailStack> {
  const database: OwnDatabase = await createOwnDatabase(label);
  const sink = await startMailSink({
    host: '127.0.0.1',
    port: 0,
    dir: mkdtempSync(path.join(os.tmpdir(), 'galang-mail-')),
  });
  const stack = await startStack({
    ...options,
    databaseUrl: database.url,
    env: { SMTP_URL: `smtp://127.0.0.1:${sink.port}`, ...options.env },
  });
  return {
    stack,
    sink,
    stop: async () => {
      await stack.stop();
      await sink.stop();
      await database.drop();
    },
  };
}

/**
 * One numbering run of the receipts, on the receipts' task queue, to its end: test stacks have
 * no receipts schedule, so a test runs the writer when it wants its documents.
 */
export function runReceipts(
  stack: Stack,
  workflowId = `receipts-test-${randomUUID()}`,
): Promise<ReceiptsReport> {
  return stack.temporal.workflow.execute<ReceiptsWorkflow>(WorkflowType.receipts, {
    workflowId,
    taskQueue: receiptsTaskQueue(stack.config.temporal.taskQueue),
    args: [],
  });
}
