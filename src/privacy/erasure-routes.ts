import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AuditSubject } from '../audit/audit-entry';
import type { DonorErasure } from './donor-erasure';
import { ErasureBody, ErasureDone } from './erasure-schemas';

/** The audit row of an erasure: the donation when named, never the address. */
function erasureSubject(request: FastifyRequest): AuditSubject {
  const body = request.body as ErasureBody;
  return 'donationId' in body
    ? { donationId: body.donationId, detail: { by: 'donation' } }
    : { detail: { by: 'email' } };
}

/** `POST /v1/donor-erasures`: an operator erases a donor (docs/receipts-and-privacy.md). */
export const erasureRoutes: FastifyPluginAsyncTypebox<{ erasure: DonorErasure }> = async (
  app,
  { erasure },
) => {
  app.post(
    '/v1/donor-erasures',
    {
      config: { auth: 'operator', audit: { action: 'erase', subject: erasureSubject } },
      schema: {
        summary: 'Erase a donor (operators)',
        description:
          "Replaces the donor's name, e-mail and messages with a pseudonym in every donation " +
          'of theirs (found by the address, or by one donation), purges their raw webhook ' +
          'bodies and cached wall pages. Amounts, dates, campaigns and receipt numbers stay; ' +
          'receipts then show "Erased donor". Erasing twice is harmless.',
        body: ErasureBody,
        response: { 200: ErasureDone },
      },
    },
    async (request) => erasure.erase(request.body),
  );
};
