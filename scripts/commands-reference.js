// `npm run docs:commands`: writes the generated part of docs/reference/commands.md from the
// commands' own --help (src/cli/command-reference.ts); test/docs/commands-reference.test.ts fails
// when the checked-in page differs. Run after `npm run build`.
import { readFileSync, writeFileSync } from 'node:fs';

const { skiffProgram } = await import('../dist/src/cli/main.js');
const { renderCommandReference, withGeneratedReference } = await import('../dist/src/cli/command-reference.js');
const page = 'docs/reference/commands.md';
const before = readFileSync(page, 'utf8');
const after = withGeneratedReference(before, renderCommandReference(await skiffProgram()));
if (after === before) console.log(`${page} is up to date`);
else {
  writeFileSync(page, after);
  console.log(`${page} rewritten from the commands' --help`);
}
