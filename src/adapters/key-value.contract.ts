/**
 * One behavioural contract for every {@link KeyValue} adapter, so the in-memory store of
 * embedded mode cannot drift from the Redis one a cluster shares.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KeyValue } from '../shared/key-value.js';
import type { ManualOrRealControl } from './lease.contract.js';

export interface KeyValueEnv {
  /** Two handles on the same store (two nodes in a cluster; the same object in memory). */
  readonly stores: readonly [KeyValue, KeyValue];
  readonly clock: ManualOrRealControl;
  cleanup(): Promise<void>;
}

const LONG = 60_000;

export function keyValueContract(
  name: string,
  make: () => Promise<KeyValueEnv>,
  options: { skip?: string | boolean } = {},
): void {
  const withEnv = (fn: (env: KeyValueEnv) => Promise<void>) => async () => {
    const env = await make();
    try {
      await fn(env);
    } finally {
      await env.cleanup();
    }
  };

  void describe(`${name}: key-value contract`, { skip: options.skip ?? false }, () => {
    void it(
      'sets, reads (from another handle), overwrites and deletes a value',
      withEnv(async ({ stores: [a, b] }) => {
        assert.equal(await a.get('k'), null);
        await a.set('k', 'v1', LONG);
        assert.equal(await b.get('k'), 'v1');
        await b.set('k', 'v2', LONG);
        assert.equal(await a.get('k'), 'v2');
        await a.del('k');
        assert.equal(await b.get('k'), null);
        await a.del('k'); // absent: nothing happens
        assert.equal(await a.get('other'), null);
      }),
    );

    void it(
      'a value expires after its TTL',
      withEnv(async ({ stores: [a, b], clock }) => {
        await a.set('short', 'x', clock.shortTtlMs);
        await a.set('long', 'y', LONG);
        await clock.advance(clock.shortTtlMs);
        assert.equal(await b.get('short'), null);
        assert.equal(await b.get('long'), 'y');
      }),
    );

    void it(
      'incr counts from 0 across handles, and concurrent increments are never lost',
      withEnv(async ({ stores: [a, b] }) => {
        assert.equal(await a.incr('n', LONG), 1);
        assert.equal(await b.incr('n', LONG), 2);
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).incr('n', LONG)),
        );
        assert.deepEqual(
          [...results].sort((x, y) => x - y),
          Array.from({ length: 20 }, (_, i) => i + 3),
        );
        assert.equal(await a.get('n'), '22');
      }),
    );

    void it(
      'incr (re)sets the TTL: the counter lives ttl after its last increment, then restarts',
      withEnv(async ({ stores: [a, b], clock }) => {
        const ttl = clock.shortTtlMs;
        await a.incr('c', ttl);
        await clock.advance(ttl / 2);
        await a.incr('c', ttl); // pushes the expiry out again
        await clock.advance(ttl / 2 + 20);
        assert.equal(await b.get('c'), '2', 'the second increment renewed the TTL');
        await clock.advance(ttl);
        assert.equal(await b.get('c'), null);
        assert.equal(await b.incr('c', ttl), 1);
      }),
    );

    void it(
      'setIfAbsent: of racing calls exactly one sets the key; an expired key is absent',
      withEnv(async ({ stores: [a, b], clock }) => {
        const won = await Promise.all(
          Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).setIfAbsent('once', `v${i}`, LONG)),
        );
        assert.equal(won.filter(Boolean).length, 1);
        assert.equal(await a.get('once'), `v${won.indexOf(true)}`);
        await a.set('brief', 'old', clock.shortTtlMs);
        await clock.advance(clock.shortTtlMs);
        assert.equal(await b.setIfAbsent('brief', 'new', LONG), true);
        assert.equal(await a.get('brief'), 'new');
      }),
    );

    void it(
      'getCappingTtl reads the value and lowers its TTL to the cap, never raising it',
      withEnv(async ({ stores: [a, b], clock }) => {
        const ttl = clock.shortTtlMs;
        assert.equal(await a.getCappingTtl('none', ttl), null);
        await a.set('long', 'L', LONG);
        await a.set('short', 'S', ttl);
        assert.equal(await b.getCappingTtl('long', ttl), 'L');
        assert.equal(await b.getCappingTtl('short', LONG), 'S');
        assert.equal(await a.getCappingTtl('long', ttl), 'L', 'a second read: still there');
        await clock.advance(ttl);
        assert.equal(await a.get('long'), null, 'the TTL was lowered to the cap');
        assert.equal(await a.get('short'), null, 'the shorter TTL was kept');
      }),
    );

    void it(
      'keys are independent',
      withEnv(async ({ stores: [a] }) => {
        await a.incr('x', LONG);
        await a.incr('x', LONG);
        await a.incr('y', LONG);
        assert.deepEqual([await a.get('x'), await a.get('y')], ['2', '1']);
      }),
    );
  });
}
