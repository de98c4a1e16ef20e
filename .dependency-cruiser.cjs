// @ts-check
/**
 * The layers, top to bottom (docs/architecture.md): an import may only point down or sideways.
 *   4 entry points        src/entry/
 *   3 composition root    src/runtime/ (builds the object graph once; imported by entry points only)
 *   2 features            src/<feature>/, activities/, workflows/ (implementations)
 *   1 infrastructure      src/<shared>/ (db, http plumbing, temporal SDK glue, providers, ...)
 *   0 shared vocabulary   workflows/contracts/
 * Tests, benchmarks and scripts stand outside and may use any layer.
 */
const FEATURES =
  '(donations|campaigns|webhooks|reconciliation|ledger|ops|demo-page|health|idempotency|auth|audit|receipts|privacy|pledges)';
const INFRASTRUCTURE =
  '(db|http|temporal|providers|config|errors|observability|security|money|resilience|mail)';
const ENTRY = '^src/entry/';
const ROOT = '^src/runtime/';
const FEATURE = [`^src/${FEATURES}/`, '^activities/', '^workflows/(?!contracts/)'];
const INFRA = `^src/${INFRASTRUCTURE}/`;

/**
 * The architecture, enforced in `npm run lint`: the layers above, no import cycles (type imports
 * included), workflow code reaching only the contracts module, the SDK and each other, the
 * contracts a leaf, and the barrels of workflows and activities imported by the worker alone.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'entry-points-are-the-top',
      severity: 'error',
      comment: 'Nothing in the layers imports an entry point; they are run, not used.',
      from: { path: ['^src/', '^workflows/', '^activities/'], pathNot: ENTRY },
      to: { path: ENTRY },
    },
    {
      name: 'wiring-only-for-entry-points',
      severity: 'error',
      comment:
        'The composition root wires the features and infrastructure; the parts it wires never import it.',
      from: { path: [...FEATURE, INFRA, '^workflows/contracts/'] },
      to: { path: ROOT },
    },
    {
      name: 'infrastructure-below-features',
      severity: 'error',
      comment:
        'Shared infrastructure serves every feature, so it knows none of them: the wiring that names them belongs in src/runtime/.',
      from: { path: [INFRA, '^workflows/contracts/'] },
      to: { path: FEATURE },
    },
    {
      name: 'vocabulary-is-the-bottom',
      severity: 'error',
      comment: 'The shared vocabulary is imported by every layer and imports none of them.',
      from: { path: '^workflows/contracts/' },
      to: { path: INFRA },
    },
    {
      name: 'unlayered-src-folder',
      severity: 'error',
      comment: 'Every folder of src/ has a layer: add a new one to FEATURES or INFRASTRUCTURE.',
      from: {},
      to: { path: '^src/', pathNot: [ENTRY, ROOT, `^src/${FEATURES}/`, INFRA] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means two modules cannot be read, tested or changed apart.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'contracts-are-a-leaf',
      severity: 'error',
      comment: 'Everything imports the contracts; they import nothing of galang.',
      from: { path: '^workflows/contracts/' },
      to: { pathNot: ['^workflows/contracts/', '@temporalio/(workflow|common)'] },
    },
    {
      name: 'workflows-import-contracts-only',
      severity: 'error',
      comment:
        'Workflow code runs in the sandbox: the contracts, the SDK, other workflow code, and the types of the activities it proxies.',
      from: { path: '^workflows/' },
      to: {
        pathNot: ['^workflows/', '@temporalio/(workflow|common)', '^activities/'],
      },
    },
    {
      name: 'workflows-see-activities-as-types',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { path: '^activities/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-workflow-implementations-outside',
      severity: 'error',
      comment:
        'Outside workflows/ (and its tests), workflows are started by name from the contracts module.',
      from: { pathNot: ['^workflows/', '^test/'] },
      to: { path: '^workflows/(?!contracts/)' },
    },
    {
      name: 'barrels-for-the-worker',
      severity: 'error',
      comment: 'The workflows and activities barrels are what the worker registers.',
      from: { pathNot: ['^src/runtime/donation-worker\\.ts$', '^workflows/'] },
      to: { path: '^(workflows|activities)/index\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|\\.data|\\.tools|coverage)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['cjs', 'es6'],
  },
};
