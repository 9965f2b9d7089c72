// `skiff` from the same build as the benchmark (bench/lib/util.ts skiffEntry()): what bin/skiff.js
// does, but loading src/cli/main.js next to this file instead of dist/, so a benchmark compiled to
// its own outDir measures the code it was compiled with even while dist/ is being rebuilt.
//
//   node <outDir>/bench/lib/skiff-entry.js server --data-dir ...
import { main } from '../../src/cli/main.js';

await main(process.argv);
