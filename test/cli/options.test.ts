// `--config FILE` (DESIGN: "flags also readable from a config file") and Go-style durations.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { addConfigFile, dataDirErrorMessage, durationOption, intArg, listArg } from '../../src/cli/options.js';

function command(onAction: (o: Record<string, unknown>) => void): Command {
  const cmd = new Command('t')
    .exitOverride()
    .option('--data-dir <dir>', 'dir', '.skiff')
    .option('--nodes <n>', 'n', intArg, 2)
    .option('--labels <k=v,...>', 'labels', listArg, [])
    .option('--rejoin', 'bool', false)
    .addOption(durationOption('--grace <d>', 'grace', 50_000));
  addConfigFile(cmd);
  return cmd.action((o: Record<string, unknown>) => onAction(o));
}

describe('--config files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
  const file = join(dir, 'skiff.yaml');

  it('reads flags from YAML, parsed like the command line, and the command line wins', async () => {
    writeFileSync(file, 'data-dir: /var/lib/skiff\nnodes: 5\nlabels: [a=1, b=2]\nrejoin: false\ngrace: 1m30s\n');
    let seen: Record<string, unknown> = {};
    await command((o) => (seen = o)).parseAsync(['node', 't', '--config', file, '--nodes', '7']);
    assert.equal(seen.dataDir, '/var/lib/skiff');
    assert.equal(seen.nodes, 7);
    assert.deepEqual(seen.labels, ['a=1', 'b=2']);
    assert.equal(seen.rejoin, false);
    assert.equal(seen.grace, 90_000);
  });

  it('refuses unknown flags and bad values with a clear message', async () => {
    writeFileSync(file, 'nodez: 3\n');
    await assert.rejects(command(() => {}).parseAsync(['node', 't', '--config', file]), /unknown flag "nodez"/);
    writeFileSync(file, 'grace: soon\n');
    await assert.rejects(command(() => {}).parseAsync(['node', 't', '--config', file]), /invalid duration "soon"/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('says what to do when the data directory cannot be written, and only for errors inside it', () => {
    const err = (code: string, path: string) => Object.assign(new Error(code), { code, path, syscall: 'open' });
    assert.match(dataDirErrorMessage(err('EROFS', '/d/db/state.db'), '/d')!, /^the data directory \/d is on a read-only file system \(open \/d\/db\/state.db\).*make it writable again/);
    assert.match(dataDirErrorMessage(err('ENOSPC', 'd/server.lock'), './d')!, /^no space left for the data directory \.\/d .*free some space/);
    assert.match(dataDirErrorMessage(err('EACCES', '/d/tls/ca.key'), '/d/')!, /may not write the data directory .*run as its owner/);
    assert.equal(dataDirErrorMessage(err('EROFS', '/elsewhere/x'), '/d'), undefined, 'a file outside the data directory');
    assert.equal(dataDirErrorMessage(err('EADDRINUSE', '/d/x'), '/d'), undefined, 'not a data directory error');
    assert.equal(dataDirErrorMessage(new Error('plain'), '/d'), undefined);
  });
});
