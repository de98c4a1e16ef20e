import { isGrpcServiceError } from '@temporalio/client';
import { NamespaceNotFoundError } from '@temporalio/common';
import { google } from '@temporalio/proto';

const NAMESPACE_NOT_FOUND = 'temporal.api.errordetails.v1.NamespaceNotFoundFailure';

/**
 * Whether Temporal refused a call because the namespace does not exist. The raw service answers
 * gRPC NOT_FOUND for it as for a workflow it does not have; the failure in the status details
 * tells them apart (as the SDK's own clients do). A missing namespace is a misconfiguration or
 * an outage of the service, never "no such workflow".
 */
export function isNamespaceNotFound(error: unknown): boolean {
  if (error instanceof NamespaceNotFoundError) return true;
  if (!isGrpcServiceError(error)) return false;
  const status = error.metadata.get('grpc-status-details-bin')[0];
  if (!status || typeof status === 'string') return false;
  return google.rpc.Status.decode(status).details.some((detail) =>
    detail.type_url?.endsWith(NAMESPACE_NOT_FOUND),
  );
}
