import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AuditSubject } from '../audit/audit-entry';
import { AppError } from '../errors/error-catalogue';
import type { ErrorCode } from '../errors/error-catalogue';
import {
  ChangePledgeBody,
  CreatePledgeBody,
  PledgeAccepted,
  PledgeParams,
  PledgeTokenQuery,
  PledgeView,
} from './pledge-schemas';
import type { PledgeAccess, PledgeService } from './pledge-service';
import { pledgeScheduleId } from '../../workflows/contracts';
import { DONATION_REFUSALS } from '../donations/donation-failures';

/** The audit row of an operator's read or change of a pledge: the pledge's schedule. */
function pledgeSubject(request: FastifyRequest): AuditSubject {
  const { id } = request.params as { id: string };
  return { workflowId: pledgeScheduleId(id), detail: { pledge: id } };
}

/** Who asks, by the key that authenticated: a client sees its own pledges, an operator any. */
function accessOf(request: FastifyRequest): PledgeAccess {
  const principal = request.principal;
  if (principal?.kind === 'operator') return { operator: true };
  if (principal?.kind === 'client') return { client: principal.id };
  throw new AppError('unauthorized');
}

const CHANGES = ['pause', 'resume', 'cancel'] as const;
const CHANGE_SUMMARY = {
  pause: 'Pause a pledge: no period is charged until it is resumed',
  resume: 'Resume a paused pledge from the next period',
  cancel: 'Cancel a pledge: no future period is charged; one already started goes on',
};
const PROBLEMS: ErrorCode[] = ['pledge-not-found', 'pledge-cancelled'];

/**
 * Monthly giving (docs/pledges.md): a client creates and manages its donors' pledges with its
 * key; the donor manages their own with the pledge's link (`links.manage`), no key needed.
 */
export const pledgeRoutes: FastifyPluginAsyncTypebox<{ pledges: PledgeService }> = async (
  app,
  { pledges },
) => {
  app.post(
    '/v1/pledges',
    {
      config: {
        auth: 'client',
        idempotent: true,
        problems: [...DONATION_REFUSALS],
      },
      schema: {
        summary: 'Start a pledge (monthly or weekly giving)',
        description:
          'Keeps the pledge, creates its schedule and charges the current period at once as an ' +
          'ordinary donation (`firstDonation`, with its payment action). Each later period is ' +
          'a donation of its own, one per period whatever fires twice.',
        headers: { type: 'object', properties: { 'idempotency-key': { type: 'string' } } },
        body: CreatePledgeBody,
        response: { 202: PledgeAccepted },
      },
    },
    async (request, reply) => {
      const context = request.idempotency;
      if (!context) throw new AppError('idempotency-key-missing');
      const { message, ...rest } = request.body;
      const accepted = await pledges.create(
        context.scope,
        { ...rest, ...(message === undefined ? {} : { message }) },
        request.id,
      );
      return reply.code(202).header('location', accepted.pledge.links.self).send(accepted);
    },
  );

  app.get(
    '/v1/pledges/:id',
    {
      config: {
        auth: 'client-or-operator',
        audit: { action: 'pledge-read', subject: pledgeSubject },
        problems: ['pledge-not-found'],
      },
      schema: {
        summary: 'Read a pledge and its last periods',
        params: PledgeParams,
        response: { 200: PledgeView },
      },
    },
    async (request) => pledges.get(request.params.id, accessOf(request)),
  );

  app.patch(
    '/v1/pledges/:id',
    {
      config: {
        auth: 'client-or-operator',
        audit: { action: 'pledge-change', subject: pledgeSubject },
        problems: PROBLEMS,
      },
      schema: {
        summary: "Change a pledge's amount or payment method from the next period",
        params: PledgeParams,
        body: ChangePledgeBody,
        response: { 200: PledgeView },
      },
    },
    async (request) => pledges.change(request.params.id, accessOf(request), request.body),
  );

  app.get(
    '/v1/pledges/:id/manage',
    {
      config: { auth: 'none', problems: ['pledge-not-found'] },
      schema: {
        summary: "A donor's own pledge, by its link",
        params: PledgeParams,
        querystring: PledgeTokenQuery,
        response: { 200: PledgeView },
      },
    },
    async (request) => pledges.get(request.params.id, { token: request.query.token }),
  );

  for (const change of CHANGES) {
    app.post(
      `/v1/pledges/:id/${change}`,
      {
        config: {
          auth: 'client-or-operator',
          audit: { action: `pledge-${change}`, subject: pledgeSubject },
          problems: PROBLEMS,
        },
        schema: {
          summary: CHANGE_SUMMARY[change],
          params: PledgeParams,
          response: { 200: PledgeView },
        },
      },
      async (request) => pledges[change](request.params.id, accessOf(request)),
    );
    app.post(
      `/v1/pledges/:id/manage/${change}`,
      {
        config: { auth: 'none', problems: PROBLEMS },
        schema: {
          summary: `${CHANGE_SUMMARY[change]} (the donor, by its link)`,
          params: PledgeParams,
          querystring: PledgeTokenQuery,
          response: { 200: PledgeView },
        },
      },
      async (request) => pledges[change](request.params.id, { token: request.query.token }),
    );
  }
};
