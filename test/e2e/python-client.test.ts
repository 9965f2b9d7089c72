// The official Python client (Debian's python3-kubernetes) as a third client library: its wire
// habits (booleans as `True`) must mean what they mean to kube-apiserver.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_JOIN_TOKEN, TestAgent, TestServer } from '../support/cluster.js';

const SCRIPT = fileURLToPath(new URL('../../../test/e2e/python/client_checks.py', import.meta.url));
// Debian's interpreter, where python3-kubernetes is installed (a pyenv python on PATH lacks it).
const PYTHON = '/usr/bin/python3';

describe('the Python kubernetes client against skiff', () => {
  const s = new TestServer('python');
  const agent = new TestAgent(s, 'py-node');
  before(async () => {
    try {
      execFileSync(PYTHON, ['-c', 'import kubernetes']);
    } catch {
      throw new Error(`${PYTHON} cannot import kubernetes: install Debian's python3-kubernetes (apt-get install python3-kubernetes; .ci/run does)`);
    }
    await s.start(['--token', TEST_JOIN_TOKEN]);
    await agent.start();
  });
  after(async () => {
    await agent.stop();
    await s.stop();
    s.cleanup();
  });

  it('watches, patches, orphans, follows logs and is told what is not served', async () => {
    const r = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(PYTHON, [SCRIPT, s.kubeconfig, 'py-node'], { timeout: 120_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? 1 : 0, out: `${stdout}\n${stderr}` });
      });
    });
    assert.equal(r.code, 0, r.out);
    for (const step of ['watch=True streams events', 'orphanDependents=True orphans the pods', 'follow=True follows the log', 'exec on the process runtime answers with its limitation', 'done']) {
      assert.match(r.out, new RegExp(`ok: ${step.replace(/[=()]/g, '.')}`), r.out);
    }
  });
});
