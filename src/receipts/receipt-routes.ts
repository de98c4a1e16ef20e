import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { donationSubject } from '../audit/audit-entry';
import { AppError } from '../errors/error-catalogue';
import { DonationParams } from '../donations/donation-schemas';
import { DonationReceipts, ReceiptFileParams, ReceiptFileQuery } from './receipt-schemas';
import type { ReceiptService } from './receipt-service';

/** A receipt's PDF by the link in its e-mail, and a donation's documents for its client. */
export const receiptRoutes: FastifyPluginAsyncTypebox<{ receipts: ReceiptService }> = async (
  app,
  { receipts },
) => {
  app.get(
    '/v1/receipts/:number.pdf',
    {
      config: { auth: 'none', problems: ['receipt-not-found'] },
      schema: {
        summary: 'A receipt or credit note as PDF',
        description:
          'Opened with the link in the e-mail: the token binds the link to the number. A wrong ' +
          'token answers like an unknown number. Rendered from the ledger, the same bytes ' +
          'every time.',
        params: ReceiptFileParams,
        querystring: ReceiptFileQuery,
        response: {
          200: { description: 'The PDF', type: 'string', contentMediaType: 'application/pdf' },
        },
      },
    },
    async (request, reply) => {
      const pdf = await receipts.pdf(request.params.number, request.query.token);
      if (!pdf) throw new AppError('receipt-not-found');
      return reply
        .type('application/pdf')
        .header('content-disposition', `inline; filename="${request.params.number}.pdf"`)
        .send(pdf);
    },
  );

  app.get(
    '/v1/donations/:id/receipt',
    {
      config: {
        auth: 'client-or-operator',
        audit: { action: 'receipt-read', subject: donationSubject },
        problems: ['donation-not-found'],
      },
      schema: {
        summary: "A donation's receipt and credit notes",
        description:
          '`receipt` is null until the organization numbers the confirmation (within seconds); ' +
          'each document links its PDF.',
        params: DonationParams,
        response: { 200: DonationReceipts },
      },
    },
    async (request) => {
      const principal = request.principal;
      const clientId = principal?.kind === 'client' ? principal.id : undefined;
      const found = await receipts.forDonation(request.params.id, clientId);
      if (!found) throw new AppError('donation-not-found');
      return found;
    },
  );
};
