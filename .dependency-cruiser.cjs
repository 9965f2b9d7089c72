// Import cycles are refused, between files (type-only imports included: they still tie the
// modules' meaning together) and between the packages (top-level folders of src/) they form.
module.exports = {
  forbidden: [
    { name: 'no-circular-files', severity: 'error', comment: 'files import each other, directly or through others', from: {}, to: { circular: true } },
    {
      name: 'no-circular-packages',
      severity: 'error',
      comment: 'two packages (folders of src/) depend on each other',
      scope: 'folder',
      from: { path: '^src/[^/]+' },
      to: { circular: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    // The dashboard's page is bundled on its own (scripts/build-dashboard.js).
    exclude: { path: '^src/dashboard/ui/' },
  },
};
