import {
  donationIdOfWorkflow,
  donationWorkflowId,
  latePaymentWorkflowId,
  reversalWorkflowId,
} from '../../workflows/contracts';

describe('workflow IDs', () => {
  it('reads the donation back from its workflow ID', () => {
    for (const donationId of ['0b9c6f1e-3f7a-4d5e-9a51-2c8b1f0e7d42', 'donation-x', 'a']) {
      expect(donationIdOfWorkflow(donationWorkflowId(donationId))).toBe(donationId);
    }
  });

  it('names no donation for the other workflows, nor for a bare prefix', () => {
    expect(donationIdOfWorkflow(latePaymentWorkflowId('d1'))).toBeUndefined();
    expect(donationIdOfWorkflow(reversalWorkflowId('d1', 'refund', 're_1'))).toBeUndefined();
    expect(donationIdOfWorkflow('donation-')).toBeUndefined();
    expect(donationIdOfWorkflow('my-donation-d1')).toBeUndefined();
  });
});
