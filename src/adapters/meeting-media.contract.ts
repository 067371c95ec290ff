/**
 * One behavioural contract for every {@link RoomMediaState} adapter (in memory for
 * embedded mode, Redis for the cluster), so the two cannot drift.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CellKey } from '../cell/lease.js';
import type { RoomMediaState } from '../edge/room-media/ports.js';
import type { ManualOrRealControl } from './lease.contract.js';

export interface MeetingMediaEnv {
  /** Its records expire `clock.shortTtlMs` after their last write or touch. */
  readonly state: RoomMediaState;
  readonly clock: ManualOrRealControl;
  cleanup(): Promise<void>;
}

const A: CellKey = { appCode: 'app', roomId: '835-000-036' };
const B: CellKey = { appCode: 'app', roomId: '835-000-037' };
const OTHER_APP: CellKey = { appCode: 'other', roomId: '835-000-036' };
const sorted = <T>(list: readonly T[]) => [...list].map((x) => JSON.stringify(x)).sort();

export function meetingMediaContract(
  name: string,
  make: () => Promise<MeetingMediaEnv>,
  options: { skip?: string | boolean } = {},
): void {
  const run = (title: string, body: (env: MeetingMediaEnv) => Promise<void>) =>
    it(title, async () => {
      const env = await make();
      try {
        await body(env);
      } finally {
        await env.cleanup();
      }
    });

  void describe(`RoomMediaState contract: ${name}`, { skip: options.skip ?? false }, () => {
    void run(
      'records a user’s transports, producers and consumers per meeting',
      async ({ state }) => {
        assert.deepEqual(await state.resources(A, '16'), {
          transports: [],
          producers: [],
          consumers: [],
        });
        await state.addTransport(A, '16', { id: 't-send', direction: 'send' });
        await state.addTransport(A, '16', { id: 't-recv', direction: 'recv' });
        await state.addProducer(A, '16', { id: 'p-audio', kind: 'audio' });
        await state.addConsumer(A, '16', { id: 'c-1', producerId: 'p-other' });
        await state.addTransport(B, '16', { id: 't-b', direction: 'send' });
        await state.addTransport(OTHER_APP, '16', { id: 't-x', direction: 'recv' });
        const held = await state.resources(A, '16');
        assert.deepEqual(
          sorted(held.transports),
          sorted([
            { id: 't-send', direction: 'send' },
            { id: 't-recv', direction: 'recv' },
          ]),
        );
        assert.deepEqual(held.producers, [{ id: 'p-audio', kind: 'audio' }]);
        assert.deepEqual(held.consumers, [{ id: 'c-1', producerId: 'p-other' }]);
        assert.deepEqual((await state.resources(B, '16')).transports, [
          { id: 't-b', direction: 'send' },
        ]);
        assert.deepEqual((await state.resources(A, '17')).transports, []);
        assert.deepEqual((await state.resources(OTHER_APP, '16')).producers, []);
      },
    );

    void run(
      'lists a meeting’s live producers of every user, and only that meeting’s',
      async ({ state }) => {
        await state.addProducer(A, '16', { id: 'p1', kind: 'audio' });
        await state.addProducer(A, '16', { id: 'p2', kind: 'video' });
        await state.addProducer(A, '17', { id: 'p3', kind: 'audio' });
        await state.addProducer(B, '18', { id: 'p4', kind: 'audio' });
        await state.addProducer(OTHER_APP, '16', { id: 'p5', kind: 'audio' });
        assert.deepEqual(
          sorted(await state.liveProducers(A)),
          sorted([
            { userId: '16', producerId: 'p1', kind: 'audio' },
            { userId: '16', producerId: 'p2', kind: 'video' },
            { userId: '17', producerId: 'p3', kind: 'audio' },
          ]),
        );
        await state.forget(A, '16', { producers: ['p1', 'unknown'] });
        assert.deepEqual(
          sorted((await state.liveProducers(A)).map((p) => p.producerId)),
          sorted(['p2', 'p3']),
        );
        assert.deepEqual((await state.resources(A, '16')).producers, [{ id: 'p2', kind: 'video' }]);
        assert.deepEqual(await state.liveProducers({ appCode: 'app', roomId: '000-000-000' }), []);
      },
    );

    void run('finds a consumer’s meeting for its own user only', async ({ state }) => {
      await state.addConsumer(B, '16', { id: 'c-1', producerId: 'p' });
      assert.equal(await state.consumerRoom('app', '16', 'c-1'), B.roomId);
      assert.equal(await state.consumerRoom('app', '17', 'c-1'), null);
      assert.equal(await state.consumerRoom('other', '16', 'c-1'), null);
      assert.equal(await state.consumerRoom('app', '16', 'c-2'), null);
      await state.forget(B, '16', { consumers: ['c-1'] });
      assert.equal(await state.consumerRoom('app', '16', 'c-1'), null);
    });

    void run(
      'forget drops the given records only; clear drops all of one user in one meeting',
      async ({ state }) => {
        await state.addTransport(A, '16', { id: 't1', direction: 'send' });
        await state.addTransport(A, '16', { id: 't2', direction: 'recv' });
        await state.addProducer(A, '16', { id: 'p1', kind: 'audio' });
        await state.addConsumer(A, '16', { id: 'c1', producerId: 'p9' });
        await state.addProducer(A, '17', { id: 'p2', kind: 'audio' });
        await state.addProducer(B, '16', { id: 'p3', kind: 'audio' });
        await state.forget(A, '16', { transports: ['t1'] });
        assert.deepEqual((await state.resources(A, '16')).transports, [
          { id: 't2', direction: 'recv' },
        ]);
        await state.forget(A, '16', {});
        await state.clear(A, '16');
        assert.deepEqual(await state.resources(A, '16'), {
          transports: [],
          producers: [],
          consumers: [],
        });
        assert.deepEqual(
          (await state.liveProducers(A)).map((p) => p.producerId),
          ['p2'],
        );
        assert.equal(await state.consumerRoom('app', '16', 'c1'), null);
        assert.deepEqual(
          (await state.liveProducers(B)).map((p) => p.producerId),
          ['p3'],
        );
        await state.clear(A, '99'); // nothing there: no error
      },
    );

    void run(
      'records expire a TTL after their user’s last write or touch',
      async ({ state, clock }) => {
        const ttl = clock.shortTtlMs;
        await state.addTransport(A, '16', { id: 't1', direction: 'send' });
        await state.addProducer(A, '16', { id: 'p1', kind: 'audio' });
        await state.addConsumer(A, '16', { id: 'c1', producerId: 'p9' });
        await state.addProducer(A, '17', { id: 'p2', kind: 'audio' });
        await clock.advance(ttl / 2);
        await state.touch(A, '17');
        await clock.advance(ttl / 2 + ttl / 10);
        // 16's records expired; 17's were touched half a TTL ago.
        assert.deepEqual(await state.resources(A, '16'), {
          transports: [],
          producers: [],
          consumers: [],
        });
        assert.equal(await state.consumerRoom('app', '16', 'c1'), null);
        assert.deepEqual(await state.liveProducers(A), [
          { userId: '17', producerId: 'p2', kind: 'audio' },
        ]);
        await clock.advance(ttl / 2);
        assert.deepEqual(await state.liveProducers(A), []);
      },
    );
  });
}
