import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  SimulatorDispute,
  SimulatorDisputeStatus,
  SimulatorPayment,
  SimulatorPaymentStatus,
  SimulatorRefund,
  SimulatorRefundStatus,
} from './simulator-protocol';
import { SAVED_METHOD_STATES } from './simulator-saved-methods';
import type { SavedMethodState } from './simulator-saved-methods';

/** The simulator's Fastify app, typed for TypeBox schemas. */
export const createSimulatorApp = () =>
  Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>();
export type SimulatorApp = ReturnType<typeof createSimulatorApp>;

/** What the control routes drive (the simulator's own methods): a donor's, a bank's moves. */
export interface SimulatorControls {
  transition(id: string, status: SimulatorPaymentStatus): SimulatorPayment;
  payment(id: string): SimulatorPayment | undefined;
  /** Every payment made, with its refunds and disputes. */
  payments(): SimulatorPayment[];
  refundAtProvider(paymentId: string, amount: number): SimulatorRefund;
  settleRefund(
    refundId: string,
    status: Exclude<SimulatorRefundStatus, 'pending'>,
  ): SimulatorRefund;
  openDispute(paymentId: string, amount?: number): SimulatorDispute;
  closeDispute(
    disputeId: string,
    status: Exclude<SimulatorDisputeStatus, 'open'>,
  ): SimulatorDispute;
  setSavedMethod(id: string, state: SavedMethodState): { id: string; state: SavedMethodState };
}

const IdParams = Type.Object({ id: Type.String() });
const PaymentMove = Type.Object({
  id: Type.String(),
  action: Type.Union([
    Type.Literal('settle'),
    Type.Literal('decline'),
    Type.Literal('expire'),
    Type.Literal('process'),
  ]),
});
const RefundMove = Type.Object({
  id: Type.String(),
  action: Type.Union([Type.Literal('succeed'), Type.Literal('fail')]),
});
const DisputeMove = Type.Object({
  id: Type.String(),
  action: Type.Union([Type.Literal('win'), Type.Literal('lose')]),
});
const SavedMethodMove = Type.Object({
  id: Type.String(),
  state: Type.Union(SAVED_METHOD_STATES.map((state) => Type.Literal(state))),
});
const AmountBody = Type.Object({ amount: Type.Optional(Type.Integer({ minimum: 1 })) });

const paymentStatuses: Record<string, SimulatorPaymentStatus> = {
  settle: 'settled',
  decline: 'declined',
  expire: 'expired',
  process: 'processing',
};

/**
 * Test controls, outside the gateway API: what the donor, the bank or the provider's dashboard
 * would do. Each answers the changed object and notifies galang; a move the lifecycle forbids
 * answers 409. Not subject to the latency and error knobs.
 */
export function registerControlRoutes(app: SimulatorApp, simulator: SimulatorControls): void {
  // A control with nothing to say may come without a body.
  app.addHook('preValidation', async (request) => {
    if (request.url.startsWith('/test/')) request.body ??= {};
  });
  // The provider's whole record, as its dashboard's export: what a soak checks galang against.
  app.get('/test/payments', async () => ({ payments: simulator.payments() }));

  app.post('/test/payments/:id/:action', { schema: { params: PaymentMove } }, async (request) =>
    simulator.transition(request.params.id, paymentStatuses[request.params.action] ?? 'pending'),
  );

  app.post(
    '/test/payments/:id/refunds',
    { schema: { params: IdParams, body: AmountBody } },
    async (request, reply) => {
      const payment = simulator.payment(request.params.id);
      const amount = request.body.amount ?? payment?.paid_amount ?? payment?.amount ?? 0;
      return reply.code(201).send(simulator.refundAtProvider(request.params.id, amount));
    },
  );

  app.post('/test/refunds/:id/:action', { schema: { params: RefundMove } }, async (request) =>
    simulator.settleRefund(
      request.params.id,
      request.params.action === 'succeed' ? 'succeeded' : 'failed',
    ),
  );

  app.post(
    '/test/payments/:id/disputes',
    { schema: { params: IdParams, body: AmountBody } },
    async (request, reply) =>
      reply.code(201).send(simulator.openDispute(request.params.id, request.body.amount)),
  );

  app.post(
    '/test/saved-methods/:id/:state',
    { schema: { params: SavedMethodMove } },
    async (request) => simulator.setSavedMethod(request.params.id, request.params.state),
  );

  app.post('/test/disputes/:id/:action', { schema: { params: DisputeMove } }, async (request) =>
    simulator.closeDispute(request.params.id, request.params.action === 'win' ? 'won' : 'lost'),
  );
}
