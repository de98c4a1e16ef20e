import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { CORRELATION_HEADER } from '../../workflows/contracts';

/**
 * Reads the correlation id header the workflow interceptor adds to each activity and puts it on
 * every log line the activity writes, so one donation's lines can be found from its request.
 */
export const correlationActivityInterceptor: ActivityInterceptorsFactory = () => {
  let correlationId: string | undefined;
  return {
    inbound: {
      async execute(input, next) {
        const header = input.headers[CORRELATION_HEADER];
        const value: unknown = header ? defaultPayloadConverter.fromPayload(header) : undefined;
        correlationId = typeof value === 'string' ? value : undefined;
        return next(input);
      },
    },
    outbound: {
      getLogAttributes(attributes, next) {
        return next(correlationId ? { ...attributes, correlationId } : attributes);
      },
    },
  };
};
