import { donationWorkflowId } from '../../workflows/contracts';
import type { DriverContext } from './driver-context';

type Payload = { data?: Uint8Array | null } | null | undefined;
const decode = (payload: Payload) => (payload?.data ? Buffer.from(payload.data).toString() : '');

/**
 * With `MONEY_DEBUG` set, a failing case also prints its donation row, its inbox rows and the
 * donation workflow's history (signals, markers with their local activity and result): enough
 * to see, say, a failed workflow task whose local activity still wrote to Postgres.
 */
export async function debugLines(ctx: DriverContext, donationId: string): Promise<string[]> {
  if (!process.env.MONEY_DEBUG) return [];
  const { db, temporal } = ctx.stack;
  const lines: string[] = [];
  const row = await db
    .selectFrom('donations')
    .selectAll()
    .where('id', '=', donationId)
    .executeTakeFirst();
  lines.push(`row ${JSON.stringify(row)}`);
  const inbox = await db
    .selectFrom('webhook_inbox')
    .select(['event_key', 'payload', 'received_at', 'processed_at', 'last_error'])
    .where('donation_id', '=', donationId)
    .orderBy('id')
    .execute();
  for (const entry of inbox) lines.push(`inbox ${JSON.stringify(entry)}`);
  const history = await temporal.workflow.getHandle(donationWorkflowId(donationId)).fetchHistory();
  for (const event of history.events ?? []) {
    const marker = event.markerRecordedEventAttributes;
    const signal = event.workflowExecutionSignaledEventAttributes;
    const detail = marker
      ? `${marker.markerName ?? ''} ${decode(marker.details?.data?.payloads?.[0])} → ${decode(marker.details?.result?.payloads?.[0])}`
      : signal
        ? `${signal.signalName ?? ''} ${decode(signal.input?.payloads?.[0])}`
        : '';
    const at = new Date(
      Number(event.eventTime?.seconds ?? 0) * 1000 +
        Math.floor((event.eventTime?.nanos ?? 0) / 1e6),
    );
    lines.push(
      `event ${String(event.eventId)} type ${String(event.eventType)} ${at.toISOString()} ${detail}`,
    );
  }
  return lines;
}
