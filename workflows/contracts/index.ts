/**
 * The contract between the edge, the activities and the workflows: signal, query and update
 * definitions, workflow names, IDs, inputs and results, failure types, search attributes and
 * provider events. A leaf: it imports nothing of galang's, so anything may import it.
 */
export * from './donation-status';
export * from './donation-workflow';
export * from './failure-types';
export * from './headers';
export * from './ledger';
export * from './pledges';
export * from './provider-events';
export * from './reconciliation';
export * from './receipts';
export * from './reversal-workflows';
export * from './search-attributes';
export * from './workflow-ids';
export * from './workflow-types';
