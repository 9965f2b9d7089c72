#!/usr/bin/env -S node --max-semi-space-size=64
// The flag: a server's writes leave young garbage that V8's default semi-spaces promote (see
// SERVER_NODE_FLAGS in src/util/skiff-bin.ts); harmless for short commands.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  console.error('skiff is not built yet: run `npm install` (or `npm run build`) in ' + fileURLToPath(new URL('..', import.meta.url)));
  process.exit(1);
}
const { main } = await import(entry.href);
await main(process.argv);
