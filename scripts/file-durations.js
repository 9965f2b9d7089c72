// A test reporter that records how long each test file took (the sum of its top-level tests), the
// slowest first, in the file SKIFF_TEST_DURATIONS names, so a slow file is found without reading
// the whole log. The table is written again as each file's test ends: --test-force-exit ends the process
// before a reporter's stream is done.
import { writeFileSync } from 'node:fs';

function table(byFile) {
  const rows = [...byFile].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((s, [, ms]) => s + ms, 0);
  const lines = [`${'seconds'.padStart(8)}  file`];
  for (const [file, ms] of rows) lines.push(`${(ms / 1000).toFixed(1).padStart(8)}  ${file.replace(`${process.cwd()}/`, '')}`);
  lines.push(`${(total / 1000).toFixed(1).padStart(8)}  in all (${rows.length} files)`);
  return `${lines.join('\n')}\n`;
}

export default async function* fileDurations(source) {
  const out = process.env.SKIFF_TEST_DURATIONS;
  const byFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      byFile.set(event.data.file, (byFile.get(event.data.file) ?? 0) + (event.data.details?.duration_ms ?? 0));
      if (out) writeFileSync(out, table(byFile));
    }
  }
  yield '';
}
