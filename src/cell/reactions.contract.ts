/**
 * Post-commit reactions on every backend: a reaction is recorded with its commit and carried
 * out at least once, by the owner at once or, when the owner died between COMMIT and the
 * reaction or the reaction failed, by any node's relay once due; two relays never run one
 * claim twice, a failing reaction is retried with backoff and at last kept as failed, and a
 * node runs only the reactions it has a handler for.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sqlReactionStore } from '../adapters/sql/reaction-store.js';
import type { Clock } from '../shared/clock.js';
import type { CellKey } from './lease.js';
import {
  REACTION_GRACE_MS,
  Reactor,
  type ReactionHandler,
  type ReactorConfig,
} from './reactions.js';
import { counterDomain, type CounterCommand } from './testing/counter-domain.js';
import { eventually, silentLogger, type TestBackend, type TestHost } from './testing/harness.js';
import { hostsPerTest } from './testing/suite.js';

/** The counter, with a reaction to every addition: `echo {amount}`. */
const reacting = {
  ...counterDomain(),
  kind: 'reacting-counter',
  reactionsTo: (event: { type: string; amount?: number }) =>
    event.type === 'Added' ? [{ type: 'echo', data: { amount: event.amount } }] : [],
};

export function reactionsContract(
  openBackend: () => Promise<TestBackend>,
  options: { skip?: string | false } = {},
): void {
  describe('post-commit reactions', { skip: options.skip ?? false }, () => {
    const suite = hostsPerTest(openBackend, 'rx');
    const { freshRoom } = suite;
    const later = (ms: number): Clock => ({ nowMs: () => Date.now() + ms });
    /** A reactor whose `echo` handler records what it was given (`fail` throws instead). */
    const reactor = (
      clock: Clock = later(0),
      config: ReactorConfig = {},
      fail: () => boolean = () => false,
    ) => {
      const seen: { key: CellKey; amount: number }[] = [];
      const echo: ReactionHandler = (key, data) => {
        if (fail()) return Promise.reject(new Error('media server away'));
        seen.push({ key, amount: data.amount as number });
        return Promise.resolve();
      };
      const r = new Reactor(config, {
        store: sqlReactionStore(suite.db()),
        clock,
        logger: silentLogger,
        handlers: new Map([['echo', echo]]),
      });
      return { r, seen };
    };
    const run = (h: TestHost, key: CellKey, command: CounterCommand, requestId: string) =>
      h.host.execute(reacting, key, command, { requestId });
    const rows = async (roomId: string) =>
      suite
        .db()
        .selectFrom('room_reactions')
        .selectAll()
        .where('room_id', '=', roomId)
        .orderBy('room_version')
        .execute();

    it('the owner carries a batch’s reactions out at once, in order, and deletes each', async () => {
      const { r, seen } = reactor();
      const a = await suite.start({ domains: [reacting], onCommitted: (b) => r.onCommitted(b) });
      const key = freshRoom();
      await run(a, key, { type: 'Add', amount: 2 }, 'x1');
      await run(a, key, { type: 'Add', amount: 3 }, 'x2');
      await run(a, key, { type: 'Add', amount: 0 }, 'noop'); // no event, no reaction
      await eventually(async () => ((await rows(key.roomId)).length === 0 ? true : undefined));
      assert.deepEqual(
        seen.map((s) => s.amount),
        [2, 3],
      );
      await r.stop();
    });

    it('an owner that dies between COMMIT and the reaction: a relay carries it out once it is due', async () => {
      const a = await suite.start({ domains: [reacting] }); // commits, never reacts
      const key = freshRoom();
      await run(a, key, { type: 'Add', amount: 5 }, 'dies-after');
      await a.kill();
      const [row] = await rows(key.roomId);
      assert.deepEqual(
        [row?.reaction_type, row?.data, row?.status],
        ['echo', '{"amount":5}', 'pending'],
      );

      const early = reactor(later(0));
      assert.equal(await early.r.sweep(), 0, 'still the owner’s during its grace');
      const relay = reactor(later(REACTION_GRACE_MS + 1));
      assert.equal(await relay.r.sweep(), 1);
      assert.deepEqual(relay.seen, [{ key, amount: 5 }]);
      assert.deepEqual(await rows(key.roomId), []);
      assert.equal(await relay.r.sweep(), 0, 'done once');
    });

    it('two relays at once run each reaction once', async () => {
      const a = await suite.start({ domains: [reacting] });
      const key = freshRoom();
      for (let i = 1; i <= 12; i++) await run(a, key, { type: 'Add', amount: i }, `many-${i}`);
      const clock = later(REACTION_GRACE_MS + 1);
      const [one, two] = [reactor(clock, { batchSize: 5 }), reactor(clock, { batchSize: 5 })];
      while ((await rows(key.roomId)).length > 0) await Promise.all([one.r.sweep(), two.r.sweep()]);
      const amounts = [...one.seen, ...two.seen].map((s) => s.amount).sort((x, y) => x - y);
      assert.deepEqual(
        amounts,
        Array.from({ length: 12 }, (_, i) => i + 1),
      );
    });

    it('a failing reaction is retried with backoff, then kept as failed', async () => {
      const a = await suite.start({ domains: [reacting] });
      const key = freshRoom();
      await run(a, key, { type: 'Add', amount: 7 }, 'flaky');
      let now = Date.now() + REACTION_GRACE_MS + 1;
      const clock: Clock = { nowMs: () => now };
      const config = { maxAttempts: 3, retryBaseMs: 1_000, retryMaxMs: 4_000 };
      const { r, seen } = reactor(clock, config, () => true);
      assert.equal(await r.sweep(), 0);
      let [row] = await rows(key.roomId);
      assert.deepEqual(
        [row?.status, row?.attempts, row?.last_error],
        ['pending', 1, 'media server away'],
      );
      assert.equal(Number(row?.next_attempt_at_ms), now + 1_000);
      assert.equal(await r.sweep(), 0, 'not due before its backoff');
      now += 1_000;
      await r.sweep();
      [row] = await rows(key.roomId);
      assert.deepEqual([row?.attempts, Number(row?.next_attempt_at_ms)], [2, now + 2_000]);
      now += 2_000;
      await r.sweep();
      [row] = await rows(key.roomId);
      assert.deepEqual([row?.status, row?.attempts], ['failed', 3]);
      now += 60_000;
      assert.equal(await r.sweep(), 0, 'a failed reaction waits for an operator');
      assert.deepEqual(seen, []);
    });

    it('a node runs only the reactions it has a handler for', async () => {
      const a = await suite.start({ domains: [reacting] });
      const key = freshRoom();
      await run(a, key, { type: 'Add', amount: 1 }, 'for-others');
      const other = new Reactor(
        {},
        {
          store: sqlReactionStore(suite.db()),
          clock: later(REACTION_GRACE_MS + 1),
          logger: silentLogger,
          handlers: new Map([['something-else', () => Promise.resolve()]]),
        },
      );
      assert.equal(await other.sweep(), 0);
      assert.equal((await rows(key.roomId))[0]?.attempts, 0, 'not even claimed');
    });
  });
}
