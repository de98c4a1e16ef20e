// @ts-check
/**
 * The architecture, enforced in `npm run lint`: no import cycles (type imports included), workflow
 * code reaching only the contracts module, the SDK and each other, the contracts a leaf, and the
 * barrels of workflows and activities imported by the worker alone.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
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
      from: { pathNot: ['^src/temporal/worker\\.ts$', '^workflows/'] },
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
