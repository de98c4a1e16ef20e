import { isGrpcServiceError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { AppError } from '../errors/error-catalogue';
import { isNamespaceNotFound } from '../temporal/namespace-not-found';
import type { DonationInput } from '../../workflows/contracts';

/** How long a read of a workflow's first event may take before the GET answers 503. */
const READ_TIMEOUT_MS = 1_000;
/** gRPC's NOT_FOUND: no workflow with this ID (or its history passed retention). */
const GRPC_NOT_FOUND = 5;

/**
 * The input of a donation workflow that has started, read from its first history event: what
 * the edge answers for a donation it accepted (202 PENDING) before the worker has recorded it in
 * Postgres. Undefined when no such workflow exists; 503 when Temporal cannot say, also when
 * the namespace itself is missing (NOT_FOUND too, but the service is misconfigured).
 */
export async function readDonationFromHistory(
  temporal: Client,
  workflowId: string,
): Promise<{ input: DonationInput; startedAt: Date } | undefined> {
  let first;
  try {
    const page = await temporal.connection.withDeadline(Date.now() + READ_TIMEOUT_MS, () =>
      temporal.workflowService.getWorkflowExecutionHistory({
        namespace: temporal.options.namespace,
        execution: { workflowId },
        maximumPageSize: 1,
      }),
    );
    first = page.history?.events?.[0];
  } catch (error) {
    if (isNamespaceNotFound(error)) {
      throw new AppError('service-unavailable', {
        // The namespace is not the client's business; /readyz shows Temporal degraded.
        detail: 'The workflow service cannot look this donation up now; retry later.',
        retryAfter: 5,
        cause: error,
      });
    }
    if (isGrpcServiceError(error) && (error.code as number) === GRPC_NOT_FOUND) return undefined;
    throw new AppError('service-unavailable', { retryAfter: 1, cause: error });
  }
  const payload = first?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) return undefined;
  // Through the payload codecs first: histories hold the input encrypted.
  const { payloadCodecs, payloadConverter } = temporal.options.loadedDataConverter;
  let decoded = [payload];
  for (const codec of [...payloadCodecs].reverse()) decoded = await codec.decode(decoded);
  const [plain] = decoded;
  if (!plain) return undefined;
  const input = payloadConverter.fromPayload<DonationInput>(plain);
  const seconds = Number(first?.eventTime?.seconds ?? 0);
  return { input, startedAt: new Date(seconds * 1000) };
}
