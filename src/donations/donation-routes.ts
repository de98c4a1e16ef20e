import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { refundRequestWorkflowId } from '../../workflows/contracts';
import { donationSubject } from '../audit/audit-entry';
import type { AuditSubject } from '../audit/audit-entry';
import { AppError } from '../errors/error-catalogue';
import { deriveUuid } from '../idempotency/idempotency-key';
import {
  CreateDonationBody,
  DonationAccepted,
  DonationParams,
  DonationQuery,
  DonationView,
  RefundAccepted,
  RefundBody,
} from './donation-schemas';
import type { DonationReads } from './donation-reads';
import type { DonationService } from './donation-service';
import { DONATION_REFUSALS } from './donation-failures';

/** Seconds a client is told to wait before reading a PENDING donation for its action. */
const PENDING_RETRY_AFTER = 1;

/** An operator's refund: the donation, the refund-request workflow and the amount asked. */
function refundSubject(request: FastifyRequest): AuditSubject {
  const { id } = request.params as { id: string };
  const { amount } = request.body as { amount?: number };
  const scope = request.idempotency?.scope;
  return {
    donationId: id,
    workflowId: scope ? refundRequestWorkflowId(id, deriveUuid(scope)) : undefined,
    detail: { amount: amount ?? 'all' },
  };
}

/** `POST /v1/donations`, `GET /v1/donations/:id` and the operators' refunds. */
export const donationRoutes: FastifyPluginAsyncTypebox<{
  service: DonationService;
  reads: DonationReads;
}> = async (app, { service, reads }) => {
  app.post(
    '/v1/donations',
    {
      config: {
        auth: 'client',
        idempotent: true,
        problems: [...DONATION_REFUSALS],
      },
      schema: {
        summary: 'Start a donation',
        headers: {
          type: 'object',
          properties: { 'idempotency-key': { type: 'string' } },
        },
        body: CreateDonationBody,
        response: { 202: DonationAccepted },
      },
    },
    async (request, reply) => {
      const context = request.idempotency;
      if (!context) throw new AppError('idempotency-key-missing');
      const { donor, message, ...rest } = request.body;
      const accepted = await service.create(
        context.scope,
        {
          ...rest,
          donor: { name: donor.name, email: donor.email, anonymous: donor.anonymous },
          ...(message === undefined ? {} : { message }),
        },
        request.id,
      );
      reply.code(202).header('location', accepted.links.self);
      // PENDING: the action is not there yet; the GET (Location) shows it once it exists.
      if (accepted.paymentAction === null) reply.header('retry-after', String(PENDING_RETRY_AFTER));
      return reply.send(accepted);
    },
  );

  app.get(
    '/v1/donations/:id',
    {
      config: {
        auth: 'client-or-operator',
        audit: { action: 'donation-read', subject: donationSubject },
        problems: ['donation-not-found'],
      },
      schema: {
        summary: 'Read a donation',
        params: DonationParams,
        querystring: DonationQuery,
        response: { 200: DonationView },
      },
    },
    async (request, reply) => {
      const principal = request.principal;
      const wait = Number(request.query.wait ?? 0);
      // A long poll ends early when its client has gone.
      const gone = new AbortController();
      if (wait > 0) {
        reply.raw.once('close', () => {
          gone.abort();
        });
      }
      return reads.get(
        request.params.id,
        principal?.kind === 'client' ? principal.id : undefined,
        wait,
        gone.signal,
      );
    },
  );

  app.post(
    '/v1/donations/:id/refunds',
    {
      config: {
        auth: 'operator',
        audit: { action: 'refund', subject: refundSubject },
        idempotent: true,
        problems: ['donation-not-found', 'donation-not-refundable'],
      },
      schema: {
        summary: 'Refund a confirmed donation (operators)',
        params: DonationParams,
        body: RefundBody,
        response: { 202: RefundAccepted },
      },
    },
    async (request, reply) => {
      const context = request.idempotency;
      if (!context) throw new AppError('idempotency-key-missing');
      const refund = await service.requestRefund(
        request.params.id,
        request.body.amount,
        request.body.reason,
        // From the operator's Idempotency-Key: a retried request is the same refund everywhere.
        deriveUuid(context.scope),
      );
      return reply.code(202).header('location', refund.links.donation).send(refund);
    },
  );
};
