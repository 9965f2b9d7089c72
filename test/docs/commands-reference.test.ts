// docs/reference/commands.md's generated part is what each command's --help says: a flag added,
// renamed or given a new default without `npm run docs:commands` fails here, and so in CI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { skiffProgram } from '../../src/cli/main.js';
import { generatedPart, renderCommandReference, withGeneratedReference } from '../../src/cli/command-reference.js';

// Compiled to dist/test/docs/: the repository is three levels up.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PAGE = join(ROOT, 'docs', 'reference', 'commands.md');
const SKIFF = join(ROOT, 'bin', 'skiff.js');

test('the checked-in command reference is what the commands define (else: npm run docs:commands)', async () => {
  const page = readFileSync(PAGE, 'utf8');
  const checkedIn = generatedPart(page);
  assert.ok(checkedIn, `${PAGE} has no generated part: run npm run docs:commands`);
  const made = renderCommandReference(await skiffProgram());
  if (checkedIn !== made) {
    // The first line that differs, so the failure says what drifted.
    const a = checkedIn.split('\n');
    const b = made.split('\n');
    const i = a.findIndex((line, n) => line !== b[n]);
    assert.fail(`docs/reference/commands.md differs from the commands' --help at its generated line ${i + 1}:\n  checked in: ${a[i]}\n  --help says: ${b[i]}\nrun npm run docs:commands`);
  }
});

test('each block is byte for byte what `skiff … --help` prints', () => {
  const page = readFileSync(PAGE, 'utf8');
  for (const path of [['up'], ['cloud', 'fault'], ['restore'], ['image', 'load']]) {
    const block = new RegExp(`^### skiff ${path.join(' ')}\\n\\n\`\`\`\\n([\\s\\S]*?)\\n\`\`\`$`, 'm').exec(page)?.[1];
    assert.ok(block, `a block for skiff ${path.join(' ')}`);
    const env = { ...process.env };
    delete env.FORCE_COLOR;
    const help = execFileSync(process.execPath, [SKIFF, ...path, '--help'], { env, encoding: 'utf8' });
    assert.equal(block, help.trimEnd(), `skiff ${path.join(' ')} --help`);
  }
});

test('regenerating replaces only the generated part, and adds one to a page without it', () => {
  const generated = '<!-- BEGIN GENERATED: x -->\nnew\n<!-- END GENERATED -->\n';
  const page = '# Commands\n\nby hand\n\n<!-- BEGIN GENERATED: npm run docs:commands writes what follows from the commands\' --help; do not edit by hand -->\nold\n<!-- END GENERATED -->\n\nafter\n';
  const made = renderCommandReference(new Command('x'));
  const once = withGeneratedReference(page, made);
  assert.match(once, /^# Commands\n\nby hand\n\n<!-- BEGIN GENERATED/);
  assert.match(once, /<!-- END GENERATED -->\n\nafter\n$/);
  assert.equal(withGeneratedReference(once, made), once, 'idempotent');
  assert.equal(withGeneratedReference('# Commands\n', generated), `# Commands\n\n${generated}`);
});
