import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ImageGc, type GcImage } from '../../src/agent/image-gc.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';

const MiB = 1024 * 1024;

function store(images: GcImage[], capacity: number, otherUse: number) {
  const state = { images: [...images], used: new Set<string>(), removed: [] as string[], otherUse };
  return {
    state,
    usage: async () => ({ usedBytes: state.otherUse + state.images.reduce((a, i) => a + i.size, 0), capacityBytes: capacity }),
    images: async () => state.images,
    inUse: async () => state.used,
    pinned: async () => ['skiff.local/pause:3.10'],
    remove: async (id: string) => {
      state.removed.push(id);
      state.images = state.images.filter((i) => i.id !== id);
    },
  };
}

describe('image garbage collection', () => {
  it('removes nothing below the high threshold; above it, unused images, least recently used first, down to the low threshold', async () => {
    const clock = new FakeClock();
    const s = store(
      [
        { id: 'pause', tags: ['skiff.local/pause:3.10'], size: 10 * MiB },
        { id: 'old', tags: ['old:1'], size: 100 * MiB },
        { id: 'older', tags: ['older:1'], size: 100 * MiB },
        { id: 'running', tags: ['app:1'], size: 300 * MiB },
        { id: 'new', tags: ['new:1'], size: 100 * MiB },
      ],
      1000 * MiB,
      0,
    );
    const gc = new ImageGc({ clock, log: silentLogger(), ...s });
    s.state.used = new Set(['running', 'older']);
    await gc.pass();
    await clock.advance(60_000);
    s.state.used = new Set(['running', 'old']);
    await gc.pass();
    await clock.advance(60_000);
    s.state.used = new Set(['running']);
    // 610 MiB of 1000: under 85 %.
    assert.equal(await gc.pass(), 0);
    assert.deepEqual(s.state.removed, []);
    // Something else fills the disk: 910 MiB (91 %); down to 80 % means 110 MiB freed.
    s.state.otherUse = 300 * MiB;
    assert.equal(await gc.pass(), 200 * MiB, 'two images, as one of 100 MiB is not enough');
    // `older` and `new` were last touched at the first look (`new` never used: it counts from when
    // it was first seen), `old` a minute later: those two go; never pause or the running one.
    assert.deepEqual(s.state.removed, ['older', 'new']);
  });

  it('leaves images younger than the minimum age, and says once when it cannot free enough', async () => {
    const clock = new FakeClock();
    const s = store([{ id: 'fresh', tags: ['fresh:1'], size: 100 * MiB }], 100 * MiB, 0);
    const lines: string[] = [];
    const log = { ...silentLogger(), warn: (_o: unknown, msg: string) => lines.push(msg) } as unknown as ReturnType<typeof silentLogger>;
    const gc = new ImageGc({ clock, log, ...s });
    assert.equal(await gc.pass(), 0);
    assert.equal(await gc.pass(), 0);
    assert.deepEqual(s.state.removed, []);
    assert.equal(lines.filter((l) => l.includes('could not free enough')).length, 1);
    await clock.advance(3 * 60_000);
    assert.equal(await gc.pass(), 100 * MiB);
  });
});
