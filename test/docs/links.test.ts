// The README is the entry point and docs/ holds the rest: every relative Markdown link in them must
// lead to a file (or folder) of this repository, and a link's #anchor to a heading of the page it
// names, so moving or renaming a page cannot leave a reader at a dead end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

// Compiled to dist/test/docs/: the repository is three levels up.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function markdownFiles(dir: string): string[] {
  let out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(markdownFiles(p));
    else if (name.endsWith('.md')) out.push(p);
  }
  return out.sort();
}

/** The text outside fenced code blocks and inline code spans, where links are links. */
function prose(md: string): string {
  return md
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .replace(/`[^`\n]*`/g, '');
}

/** Inline links and images: [text](target) and ![alt](target), the target up to a space or ')'. */
function linkTargets(md: string): string[] {
  const out: string[] = [];
  for (const m of prose(md).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1]!);
  return out;
}

/** GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const text = md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const plain = m[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const base = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const files = [join(ROOT, 'README.md'), ...(existsSync(join(ROOT, 'docs')) ? markdownFiles(join(ROOT, 'docs')) : [])];

test('every relative link in README.md and docs/ resolves to a file of the repository, and its anchor to a heading', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of files) {
    const md = readFileSync(file, 'utf8');
    const from = relative(ROOT, file);
    for (const target of linkTargets(md)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: — not a path
      checked++;
      const [pathPart = '', anchor] = target.split('#', 2);
      if (pathPart.startsWith('/')) {
        broken.push(`${from}: ${target} is an absolute path; link relative to the page`);
        continue;
      }
      const dest = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
      if (dest !== ROOT.replace(/[\\/]$/, '') && !dest.startsWith(ROOT.endsWith(sep) ? ROOT : ROOT + sep)) {
        broken.push(`${from}: ${target} leads outside the repository`);
        continue;
      }
      if (!existsSync(dest)) {
        broken.push(`${from}: ${target} does not exist`);
        continue;
      }
      if (anchor !== undefined && anchor !== '' && dest.endsWith('.md') && !anchors(readFileSync(dest, 'utf8')).has(anchor)) {
        broken.push(`${from}: ${target}: no heading #${anchor} in ${relative(ROOT, dest)}`);
      }
    }
  }
  assert.ok(checked > 0, 'no relative links found: is the repository where the test thinks?');
  assert.deepEqual(broken, []);
});

test('the README stays an entry point (at most 17 KB; the rest lives in docs/)', () => {
  const size = statSync(join(ROOT, 'README.md')).size;
  assert.ok(size <= 17 * 1024, `README.md is ${size} bytes; move detail into docs/ and link to it`);
});

test('the anchors are GitHub’s', () => {
  const a = anchors('# Real containers: `--runtime containerd`\n## Node.js flags of a server\n## A\n## A\n```\n# not a heading\n```\n');
  assert.deepEqual([...a], ['real-containers---runtime-containerd', 'nodejs-flags-of-a-server', 'a', 'a-1']);
  assert.deepEqual(linkTargets('see [x](a.md#b), `[y](no.md)`, ![i](img.png "t") and [z](https://e.org)'), ['a.md#b', 'img.png', 'https://e.org']);
});
