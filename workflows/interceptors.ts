import { defaultPayloadConverter, workflowInfo } from '@temporalio/workflow';
import type { Headers, WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { CORRELATION_HEADER } from './contracts';

/**
 * Passes the correlation id the edge put in the workflow's memo to every activity as a header,
 * so activity logs name the request that started the donation, and adds it to every line the
 * workflow itself logs (`log` from @temporalio/workflow). Pure: bundled into the sandbox.
 */
export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      getLogAttributes(input, next) {
        const correlationId = workflowInfo().memo?.correlationId;
        return next(typeof correlationId === 'string' ? { ...input, correlationId } : input);
      },
      scheduleActivity: (input, next) => next(withCorrelation(input)),
      scheduleLocalActivity: (input, next) => next(withCorrelation(input)),
    },
  ],
});

function withCorrelation<T extends { headers: Headers }>(input: T): T {
  const correlationId = workflowInfo().memo?.correlationId;
  if (typeof correlationId !== 'string') return input;
  return {
    ...input,
    headers: {
      ...input.headers,
      [CORRELATION_HEADER]: defaultPayloadConverter.toPayload(correlationId),
    },
  };
}
