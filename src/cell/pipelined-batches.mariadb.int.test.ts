/**
 * Pipelined batches on MariaDB + Redis: the next batch of a room is decided while the one
 * before is in the database, on the state that one will commit, and sent behind it. These
 * tests attack what that could break: versions, first answers, the order of commits, a
 * batch decided on a write that never committed, and the lease of a room that never rests.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql as rawSql } from 'kysely';
import { describe, it } from 'node:test';
import type { SqlBackend } from '../adapters/sql/database.js';
import type { SqlCellStore } from '../adapters/sql/sql-cell-store.js';
import type { SqlCommitRequest, SqlStoreTypes } from '../adapters/sql/sql-store-types.js';
import { errors } from '../shared/error-codes.js';
import { clusterSkipReason } from '../testing/backends.js';
import type { CommandResult, CommittedBatch } from './cell.js';
import type { CellStore } from './cell-store.js';
import type { CellHost } from './host.js';
import type { CounterEvent } from './testing/counter-domain.js';
import { counter, eventually, mariadbRedisBackend, sleep } from './testing/harness.js';
import { runLocal, stateOf } from './testing/routing.js';
import { hostsPerTest } from './testing/suite.js';

const skip = await clusterSkipReason();

/** What happened to one commit, as positions in one sequence of store events. */
interface CommitTrace {
  readonly fromVersion: number;
  readonly began: number;
  sent?: number;
  answered?: number;
  kind?: string;
}

/**
 * How the store treats the commit at one index: hide its `sent`, act when it is sent, hold
 * its answer; or run `thenFail` last in its transaction, which fails it, and answer as a
 * database that rolled it back on a lock conflict.
 */
interface Step {
  readonly hideSent?: boolean;
  readonly onSent?: () => void;
  readonly answerAfter?: () => Promise<unknown>;
  readonly thenFail?: readonly string[];
}

/** The host's SQL store, recording every commit and acting out `steps` once armed. */
function scriptedStore(inner: SqlCellStore, sql: SqlBackend) {
  let seq = 0;
  let steps: readonly Step[] | null = null;
  const traces: CommitTrace[] = [];
  const store: CellStore<SqlStoreTypes> = {
    queries: inner.queries,
    pipelines: inner.pipelines,
    activate: (...args) => inner.activate(...args),
    findResults: (...args) => inner.findResults(...args),
    saveSnapshot: (...args) => inner.saveSnapshot(...args),
    dueAlarms: (...args) => inner.dueAlarms(...args),
    leaseEpochOf: (...args) => inner.leaseEpochOf(...args),
    async commit(request, nowMs) {
      const trace: CommitTrace = { fromVersion: request.fromVersion, began: ++seq };
      const step = steps ? (steps[traces.length] ?? {}) : {};
      if (steps) traces.push(trace);
      const outcome = await inner
        .commit(
          {
            ...request,
            ...(step.thenFail
              ? { build: withLast((tx) => request.build(tx), step.thenFail, sql) }
              : {}),
            sent: () => {
              trace.sent = ++seq;
              if (!step.hideSent) request.sent?.();
              step.onSent?.();
            },
          },
          nowMs,
        )
        .catch((error: unknown) => {
          if (!step.thenFail) throw error;
          trace.answered = ++seq;
          trace.kind = 'lock conflict';
          throw errors.DATABASE_LOCK_CONFLICT('rolled back in the test');
        });
      await step.answerAfter?.();
      trace.answered = ++seq;
      trace.kind = outcome.kind;
      return outcome;
    },
  };
  return {
    store,
    traces,
    arm(script: readonly Step[]) {
      steps = script;
    },
  };
}

/** `build`, with `statements` run last in the transaction. */
function withLast(
  build: SqlCommitRequest['build'],
  statements: readonly string[],
  sql: SqlBackend,
) {
  return async (tx: Parameters<SqlCommitRequest['build']>[0]) => {
    const write = await build(tx);
    if (!write) return write;
    const extra = statements.map((text) => ({ compile: () => rawSql.raw(text).compile(sql.db) }));
    return { ...write, statements: [...write.statements, ...extra] };
  };
}

/**
 * A scripted test holds the cell's lane while it waits for commands to queue. With the
 * suite's 900 ms lease, a slow machine could find the lease stale by then: the next command
 * would wait for a renewal on that lane, held by the script, until the script timed out.
 * That wait is the script's, not the cell's, so these tests take a lease that outlives them.
 */
const scriptLease = { leaseTtlMs: 60_000 };

async function pipelined(host: CellHost, outcome: 'committed' | 'decided_again') {
  const metric = await host.metrics.pipelined.get();
  return metric.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

void describe('pipelined batches (MariaDB + Redis)', { skip }, () => {
  const suite = hostsPerTest(mariadbRedisBackend, 'p');
  const { freshRoom } = suite;
  const host = suite.start;
  const logOf = (roomId: string) =>
    suite
      .db()
      .selectFrom('room_command_log')
      .select(['version', 'request_id', 'events'])
      .where('room_id', '=', roomId)
      .orderBy('version')
      .execute();

  void it('a burst is decided in batches behind batches: gap-free versions, each answer its own, commits announced in order', async () => {
    const announced: CommittedBatch[] = [];
    const first = await host({ onCommitted: (batch) => announced.push(batch) });
    const a = first.host;
    const key = freshRoom();
    await runLocal(a, key, { type: 'Add', amount: 0 }); // loaded: the burst meets a cell at rest
    const results = await Promise.all(
      Array.from({ length: 600 }, (_, i) => runLocal(a, key, { type: 'Add', amount: 1 }, `b${i}`)),
    );
    assert.ok((await pipelined(a, 'committed')) > 0, 'no batch was decided behind another');
    // Every Add 1 answers the count at its own version: it was decided on every write before it.
    for (const r of results) assert.deepEqual(r.reply, { count: r.version });
    const versions = results.map((r) => r.version).sort((x, y) => x - y);
    assert.deepEqual(
      versions,
      Array.from({ length: 600 }, (_, i) => i + 1),
    );
    const log = await logOf(key.roomId);
    assert.deepEqual(
      log.map((r) => Number(r.version)),
      versions,
    );
    // Announced once each, in version order, with nothing skipped.
    const announcedVersions = announced
      .filter((b) => b.key.roomId === key.roomId)
      .flatMap((b) => b.entries.map((e) => e.version));
    assert.deepEqual(announcedVersions, versions);
    // The log replays to the state in memory, and to the state another owner loads.
    const replayed = log
      .flatMap((r) => JSON.parse(r.events) as CounterEvent[])
      .reduce((state, event) => counter.evolve(state, event), counter.initialState(key));
    assert.deepEqual(await stateOf(a, key), replayed);
    await first.drain();
    const { host: b } = await host();
    assert.equal((await stateOf(b, key)).count, 600);
  });

  void it('a batch behind one that did not commit is refused, and decided again from the committed state once that one failed', async () => {
    const key = freshRoom();
    const first = await host();
    // The first answer of request x, recorded by an earlier owner.
    const x = await runLocal(first.host, key, { type: 'Add', amount: 1 }, 'x');
    await first.drain();

    let scripted!: ReturnType<typeof scriptedStore>;
    const { host: b } = await host({
      config: scriptLease,
      wrapStore: (inner) => (scripted = scriptedStore(inner, suite.backend().inspect)).store,
    });
    await runLocal(b, key, { type: 'Add', amount: 0 }); // loaded
    let releaseBlocker!: () => void;
    const blockerReleased = new Promise<void>((resolve) => (releaseBlocker = resolve));
    const { traces } = scripted;
    scripted.arm([
      // 0: a commit that holds the cell while the next commands queue up.
      { hideSent: true, answerAfter: () => blockerReleased },
      // 1: the head batch (x again, and new commands): refused at x's recorded outcome, and
      // answered only once the batch behind it is in the database.
      { answerAfter: () => eventually(() => traces[2]?.sent !== undefined) },
      // 2: the batch behind: its fence expects a version that never committed. Answered late,
      // so the head's next try shows whether it waited for it.
      { answerAfter: () => sleep(100) },
    ]);
    const blocker = runLocal(b, key, { type: 'Add', amount: 1 }, 'blocker');
    await eventually(() => traces.length === 1);
    const queued = Promise.all([
      runLocal(b, key, { type: 'Add', amount: 1 }, 'x'),
      ...Array.from({ length: 39 }, (_, i) =>
        runLocal(b, key, { type: 'Add', amount: 1 }, `n${i}`),
      ),
    ]);
    await eventually(() => b.loaded(key)?.queued === 40);
    releaseBlocker();
    await blocker;
    const [retried, ...fresh] = await queued;

    assert.deepEqual(retried, { ...x, duplicate: true }, 'x keeps its first answer');
    const [, head, behind, headAgain] = traces;
    assert.equal(head?.kind, 'duplicate_request');
    assert.ok(behind?.sent !== undefined, 'the batch behind was sent');
    assert.equal(behind?.kind, 'fenced', 'its fence refused it');
    assert.ok(
      headAgain && behind.answered! < headAgain.began,
      'the head decided again only after the batch behind it had ended',
    );
    assert.ok((await pipelined(b, 'decided_again')) >= 1);

    const versions = fresh.map((r: CommandResult) => r.version).sort((p, q) => p - q);
    assert.deepEqual(
      versions,
      Array.from({ length: 39 }, (_, i) => i + 3),
    );
    for (const r of fresh) assert.deepEqual(r.reply, { count: r.version });
    const log = await logOf(key.roomId);
    assert.deepEqual(
      log.map((r) => Number(r.version)),
      Array.from({ length: 41 }, (_, i) => i + 1),
    );
    assert.equal(new Set(log.map((r) => r.request_id)).size, 41, 'one log row per request');
    assert.equal((await stateOf(b, key)).count, 41);
  });

  void it('commands of batches that did not commit are decided again in the order they arrived', async () => {
    const key = freshRoom();
    let scripted!: ReturnType<typeof scriptedStore>;
    const { host: b } = await host({
      config: scriptLease,
      wrapStore: (inner) => (scripted = scriptedStore(inner, suite.backend().inspect)).store,
    });
    await runLocal(b, key, { type: 'Add', amount: 0 }); // loaded
    const add = (id: string) => runLocal(b, key, { type: 'Add', amount: 1 }, id);
    const named = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    let releaseBlocker!: () => void;
    const blockerReleased = new Promise<void>((resolve) => (releaseBlocker = resolve));
    const later: Promise<CommandResult>[] = [];
    // A named lock held here keeps the failing batch in the database until it is released.
    const lockName = `pipe-${randomUUID()}`;
    const holder = await suite.backend().inspect.mysqlPool!.promise().getConnection();
    await holder.query('SELECT GET_LOCK(?, 10)', [lockName]);
    const { traces } = scripted;
    scripted.arm([
      // 0: holds the cell while n0…n39 queue up.
      { hideSent: true, answerAfter: () => blockerReleased },
      // 1: the head batch, n0…n19: answered once m0…m9 wait in the queue.
      { answerAfter: () => eventually(() => b.loaded(key)?.queued === 10) },
      // 2: n20…n39, behind the head: m0…m9 arrive while it is in the database, waiting for
      // the named lock; then it fails and is rolled back.
      {
        onSent: () => later.push(...named('m', 10).map(add)),
        thenFail: [`SELECT GET_LOCK('${lockName}', 10)`, 'SELECT * FROM no_such_table'],
      },
      // 3: m0…m9, behind the failing one: refused by its fence, and answered after it.
      { answerAfter: () => eventually(() => traces[2]?.answered !== undefined) },
    ]);
    void eventually(() => traces[3]?.sent !== undefined, 10_000).finally(async () => {
      await holder.query('SELECT RELEASE_LOCK(?)', [lockName]);
      holder.release();
    });
    const blocker = add('blocker');
    await eventually(() => traces.length === 1);
    const queued = named('n', 40).map(add);
    await eventually(() => b.loaded(key)?.queued === 40);
    releaseBlocker();
    await Promise.all([blocker, ...queued]);
    await Promise.all(later);

    assert.deepEqual(
      traces.slice(1, 4).map((t) => t.kind),
      ['committed', 'lock conflict', 'fenced'],
    );
    const log = await logOf(key.roomId);
    assert.deepEqual(
      log.map((r) => r.request_id).filter((id) => /^(blocker|n\d+|m\d+)$/.test(id)),
      ['blocker', ...named('n', 40), ...named('m', 10)],
    );
    assert.equal((await stateOf(b, key)).count, 51);
  });

  void it('a room under a closed loop of 256 callers keeps renewing its lease', async () => {
    const { host: a } = await host();
    const key = freshRoom();
    await runLocal(a, key, { type: 'Add', amount: 0 });
    const renewedBefore = await renewals(a);
    const until = Date.now() + 2_000; // a little over two lease TTLs (900 ms)
    let done = 0;
    const failures: unknown[] = [];
    await Promise.all(
      Array.from({ length: 256 }, async (_, c) => {
        for (let i = 0; Date.now() < until; i++) {
          await runLocal(a, key, { type: 'Add', amount: 1 }, `c${c}-${i}`).then(
            () => done++,
            (error: unknown) => failures.push(error),
          );
        }
      }),
    );
    assert.deepEqual(failures, []);
    assert.ok((await pipelined(a, 'committed')) > 0);
    assert.ok((await renewals(a)) - renewedBefore >= 3, 'renewals ran between the batches');
    assert.equal((await stateOf(a, key)).count, done);
  });
});

async function renewals(host: CellHost): Promise<number> {
  const metric = await host.metrics.leaseRenewals.get();
  return metric.values.find((v) => v.labels.outcome === 'renewed')?.value ?? 0;
}
