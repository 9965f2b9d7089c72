// Acknowledged writes survive a SIGKILL of the server; data survives restarts.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer } from '../support/cluster.js';
import type { KubeList } from '../../src/api/types.js';

describe('durability', () => {
  const s = new TestServer('durability');
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('loses no acknowledged write when the server is SIGKILLed mid-stream, and keeps data across restarts', async () => {
    await s.start();
    const client = s.client();
    const acked = new Set<string>();
    let killed = false;
    let n = 0;
    const writer = async (w: number) => {
      while (!killed) {
        const name = `w${w}-${n++}`;
        try {
          await client.create('/api/v1/namespaces/default/configmaps', { metadata: { name }, data: { payload: 'x'.repeat(200) } });
          acked.add(name);
          if (acked.size >= 300 && !killed) {
            killed = true;
            s.kill('SIGKILL');
          }
        } catch {
          // Unacknowledged: may or may not have been stored.
          if (killed) return;
        }
      }
    };
    await Promise.all(Array.from({ length: 32 }, (_, i) => writer(i)));
    client.close();
    await s.proc!.exited;

    await s.start();
    const after1 = s.client();
    const list = await after1.get<KubeList>('/api/v1/namespaces/default/configmaps');
    const stored = new Set(list.items.map((i) => i.metadata.name!));
    const lost = [...acked].filter((a) => !stored.has(a));
    assert.deepEqual(lost, [], `${lost.length} acknowledged writes lost`);
    assert.ok(acked.size >= 300);
    const rv = Number(list.metadata.resourceVersion);
    after1.close();

    // A graceful restart keeps everything too, and revisions keep increasing.
    await s.stop();
    await s.start();
    const after2 = s.client();
    const again = await after2.get<KubeList>('/api/v1/namespaces/default/configmaps');
    assert.equal(again.items.length, list.items.length);
    const created = await after2.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'after-restart' } });
    assert.ok(Number(created.metadata.resourceVersion) > rv);
    after2.close();
  });
});
