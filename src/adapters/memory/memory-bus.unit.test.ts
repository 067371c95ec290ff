import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryRealtimeBus } from './memory-bus.js';

const until = async (check: () => boolean) => {
  for (let i = 0; !check(); i++) {
    if (i > 500) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

void describe('in-process realtime bus', () => {
  void it('delivers later, in publish order, to every handler until it unsubscribes', async () => {
    const bus = new MemoryRealtimeBus();
    const a: string[] = [];
    const b: string[] = [];
    // Only the part before ':' is kept: the payloads are large.
    const head = (p: Buffer) => p.toString().split(':')[0]!;
    const unsubA = await bus.subscribe('c', (p) => a.push(head(p)));
    await bus.subscribe('c', (p) => b.push(head(p)));
    await bus.subscribe('other', () => assert.fail('wrong channel'));
    const big = 'x'.repeat(40_000); // several turns of the event loop
    const sent = Array.from({ length: 20 }, (_, i) => `${i}:${big}`);
    for (const m of sent) await bus.publish('c', m);
    assert.deepEqual(a, [], 'delivered inside publish');
    await until(() => b.length === sent.length);
    const heads = sent.map((m) => m.split(':')[0]);
    assert.deepEqual(a, heads);
    assert.deepEqual(b, heads);
    await unsubA();
    await bus.publish('c', 'last');
    await until(() => b.length === 21);
    assert.equal(a.length, 20);
    assert.equal(b.at(-1), 'last');
    await bus.close();
  });
});
