#!/usr/bin/env node
// Builds the dashboard's page: type-checks it, bundles it with esbuild (Preact and the shared
// timeline renderer in one file) and copies the HTML and CSS beside it, into dist/src/dashboard/ui,
// where `skiff dashboard` serves it from. Nothing is fetched at run time.
import { copyFileSync, mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const src = 'src/dashboard/ui';
const out = 'dist/src/dashboard/ui';
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const check = spawnSync(process.execPath, [tsc, '-p', `${src}/tsconfig.json`], { stdio: 'inherit' });
if (check.status !== 0) process.exit(check.status ?? 1);
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [`${src}/app.tsx`],
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outfile: `${out}/app.js`,
  logLevel: 'warning',
});
for (const f of ['index.html', 'app.css']) copyFileSync(`${src}/${f}`, `${out}/${f}`);
