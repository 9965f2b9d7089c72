// The command reference (docs/reference/commands.md, its generated part) made from the commands'
// own definitions: each command's --help, as `skiff … --help` prints it to a pipe (80 columns, no
// colour). A flag added, renamed or given a new default changes the page; a test compares the
// checked-in page with what this makes, so the two cannot drift (`npm run docs:commands` rewrites it).
import type { Command } from 'commander';

/** Marks around the generated part of the page; what is outside them is written by hand. */
export const BEGIN_MARK = '<!-- BEGIN GENERATED: npm run docs:commands writes what follows from the commands\' --help; do not edit by hand -->';
export const END_MARK = '<!-- END GENERATED -->';

/** What `--help` prints when stdout is not a terminal: commander's width there. */
const HELP_WIDTH = 80;

/** What `--help` prints, text added with addHelpText included (helpInformation() alone leaves it out). */
function helpText(cmd: Command): string {
  let text = '';
  cmd.configureOutput({ writeOut: (s) => void (text += s), getOutHelpWidth: () => HELP_WIDTH, getOutHasColors: () => false });
  cmd.outputHelp();
  return text.trimEnd();
}

function walk(cmd: Command, path: string[], out: { path: string[]; cmd: Command }[]): void {
  out.push({ path, cmd });
  for (const sub of cmd.commands) walk(sub, [...path, sub.name()], out);
}

/** The generated part: every command, in the order `skiff --help` lists them, its help in a block. */
export function renderCommandReference(program: Command): string {
  const all: { path: string[]; cmd: Command }[] = [];
  walk(program, [program.name()], all);
  const parts = [
    BEGIN_MARK,
    '',
    '## Every command and its flags',
    '',
    'Generated from the commands themselves: each block is what `--help` prints.',
  ];
  for (const { path, cmd } of all) parts.push('', `### ${path.join(' ')}`, '', '```', helpText(cmd), '```');
  parts.push('', END_MARK);
  return `${parts.join('\n')}\n`;
}

/** `page` with its generated part replaced by `generated` (appended when the page has none yet). */
export function withGeneratedReference(page: string, generated: string): string {
  const begin = page.indexOf(BEGIN_MARK);
  const end = page.indexOf(END_MARK);
  if (begin < 0 || end < begin) return `${page.trimEnd()}\n\n${generated}`;
  return page.slice(0, begin) + generated + page.slice(end + END_MARK.length).replace(/^\n/, '');
}

/** The generated part of `page`, as checked in; undefined when it has none. */
export function generatedPart(page: string): string | undefined {
  const begin = page.indexOf(BEGIN_MARK);
  const end = page.indexOf(END_MARK);
  return begin < 0 || end < begin ? undefined : `${page.slice(begin, end + END_MARK.length)}\n`;
}
