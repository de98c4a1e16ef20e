import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../errors/error-catalogue';
import { deriveUuid } from '../idempotency/idempotency-key';
import {
  CreateDonationBody,
  DonationAccepted,
  DonationParams,
  DonationView,
  RefundAccepted,
  RefundBody,
} from './donation-schemas';
import type { DonationService } from './donation-service';

/** `POST /v1/donations`, `GET /v1/donations/:id` and the operators' refunds. */
export const donationRoutes: FastifyPluginAsyncTypebox<{ service: DonationService }> = async (
  app,
  { service },
) => {
  app.post(
    '/v1/donations',
    {
      config: {
        auth: 'client',
        idempotent: true,
        problems: [
          'campaign-not-found',
          'campaign-closed',
          'currency-mismatch',
          'unsupported-currency',
          'payment-declined',
        ],
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
      return reply.code(202).header('location', accepted.links.self).send(accepted);
    },
  );

  app.get(
    '/v1/donations/:id',
    {
      config: { auth: 'client-or-operator', problems: ['donation-not-found'] },
      schema: {
        summary: 'Read a donation',
        params: DonationParams,
        response: { 200: DonationView },
      },
    },
    async (request) => {
      const principal = request.principal;
      return service.get(
        request.params.id,
        principal?.kind === 'client' ? principal.id : undefined,
      );
    },
  );

  app.post(
    '/v1/donations/:id/refunds',
    {
      config: {
        auth: 'operator',
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
