import assert from 'node:assert/strict';
import { it } from 'node:test';
import { keyValueContract } from '../key-value.contract.js';
import { manualTime } from '../lease.contract.js';
import { MemoryKeyValue } from './memory-key-value.js';

keyValueContract('memory', () => {
  const { clock, control } = manualTime();
  const store = new MemoryKeyValue({ clock });
  return Promise.resolve({ stores: [store, store], clock: control, cleanup: async () => {} });
});

void it('memory key-value drops expired entries, so abandoned keys cost no memory', async () => {
  const { clock, control } = manualTime();
  const store = new MemoryKeyValue({ clock });
  for (let i = 0; i < 1_000; i++) await store.incr(`attacker-${i}`, 1_000);
  await control.advance(1_001);
  for (let i = 0; i < 100; i++) await store.set(`later-${i}`, 'v', 1_000);
  assert.ok(store.size <= 100, `${store.size} entries kept`);
});
