/**
 * The one-packet batch on MariaDB, at the store: a batch whose fence matches no row (another
 * owner moved lease_epoch, or the version is not the one it was decided from) writes
 * nothing at all, not even rows that no unique key would have refused, and the connection
 * goes back to the pool usable; a batch whose fence holds commits all of its rows. A batch
 * sent behind one still in the database (the runtime's pipelining) commits only on top of
 * it. The packet's text escapes every value itself: what a caller put in a request id or a
 * payload comes back byte for byte.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql as rawSql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import {
  clusterSkipReason,
  createTestDatabase,
  type TestDatabase,
} from '../../testing/backends.js';
import { openSqlBackend, type SqlBackend } from './database.js';
import { SqlCellStore } from './sql-cell-store.js';
import type { SqlBatchWrite, SqlCommitRequest } from './sql-store-types.js';

const skip = await clusterSkipReason();

void describe('one-packet batch: the fence', { skip }, () => {
  let database: TestDatabase;
  let sql: SqlBackend;
  let store: SqlCellStore;
  let twoConnections: SqlBackend;
  before(async () => {
    database = await createTestDatabase();
    sql = await openSqlBackend(database.url, { poolSize: 1 }); // one connection: reused each time
    store = new SqlCellStore(sql);
    twoConnections = await openSqlBackend(database.url, { poolSize: 2 });
  });
  after(async () => {
    await sql?.close();
    await twoConnections?.close();
    await database?.drop();
  });

  const key = { appCode: 'default', roomId: `fence-${randomUUID().slice(0, 8)}` };
  /** One command at `version`: a log row, its outcome and one outbox event. */
  const write = (version: number): SqlBatchWrite => {
    const requestId = randomUUID();
    return {
      toVersion: version,
      reactions: [],
      log: [
        {
          version,
          requestId,
          commandType: 'Add',
          payload: '{}',
          events: '[{"type":"Added"}]',
          result: '{"reply":{}}',
        },
      ],
      outcomes: [{ requestId, version, outcome: '{"reply":{}}' }],
      outbox: [{ eventId: randomUUID(), roomVersion: version, eventType: 'Added', envelope: '{}' }],
      nextAlarmMs: null,
      snapshot: null,
      statements: [],
    };
  };
  const request = (
    fields: Pick<SqlCommitRequest, 'leaseEpoch' | 'fromVersion' | 'create'>,
    batch: SqlBatchWrite,
    roomKey = key,
  ): SqlCommitRequest => ({
    key: roomKey,
    nodeId: 'node-a',
    ...fields,
    leaseToken: () => 'token',
    interactive: false,
    build: () => Promise.resolve(batch),
    verifyOwner: () => Promise.resolve(true),
  });
  const counts = async () => {
    const count = async (table: 'room_command_log' | 'room_request_outcomes' | 'room_outbox') => {
      const row = await sql.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('room_id', '=', key.roomId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    return [
      await count('room_command_log'),
      await count('room_request_outcomes'),
      await count('room_outbox'),
    ];
  };

  void it('commits when the fence holds, and writes nothing when it does not', async () => {
    const created = await store.commit(
      request({ leaseEpoch: 1, fromVersion: 0, create: { kind: 'counter' } }, write(1)),
      Date.now(),
    );
    assert.equal(created.kind, 'committed');
    assert.deepEqual(await counts(), [1, 1, 1]);

    // Another owner moved the epoch: version 2 is free, so only the fence can refuse it.
    const movedEpoch = await store.commit(
      request({ leaseEpoch: 2, fromVersion: 1, create: null }, write(2)),
      Date.now(),
    );
    assert.deepEqual(movedEpoch, { kind: 'fenced', reason: 'lease_epoch or version moved' });
    // Decided from a version the row no longer has (v3 is free too).
    const staleVersion = await store.commit(
      request({ leaseEpoch: 1, fromVersion: 2, create: null }, write(3)),
      Date.now(),
    );
    assert.equal(staleVersion.kind, 'fenced');
    assert.deepEqual(await counts(), [1, 1, 1], 'nothing of the refused batches was written');

    // The one pooled connection was rolled back and reused: the next batch commits.
    const next = await store.commit(
      request({ leaseEpoch: 1, fromVersion: 1, create: null }, write(2)),
      Date.now(),
    );
    assert.equal(next.kind, 'committed');
    assert.deepEqual(await counts(), [2, 2, 2]);
    const cell = await sql.db
      .selectFrom('room_cells')
      .select(['version', 'lease_epoch'])
      .where('room_id', '=', key.roomId)
      .executeTakeFirstOrThrow();
    assert.deepEqual([Number(cell.version), Number(cell.lease_epoch)], [2, 1]);
  });

  /** Statements that run last in a packet: it holds the cell row while it sleeps. */
  const slowly = (...then: string[]) =>
    ['SELECT SLEEP(0.3)', ...then].map((text) => ({
      compile: () => rawSql.raw(text).compile(twoConnections.db),
    }));
  const cellVersion = async () =>
    Number(
      (
        await sql.db
          .selectFrom('room_cells')
          .select('version')
          .where('room_id', '=', key.roomId)
          .executeTakeFirstOrThrow()
      ).version,
    );

  /** Commits `first`, and `second` as soon as the store says `first` is in the database. */
  const oneBehindAnother = async (first: SqlCommitRequest, second: SqlCommitRequest) => {
    const pipelining = new SqlCellStore(twoConnections);
    assert.equal(pipelining.pipelines, true);
    const answers: string[] = [];
    let behind!: Promise<unknown>;
    const ahead = pipelining
      .commit(
        {
          ...first,
          sent: () => {
            behind = pipelining.commit(second, Date.now());
          },
        },
        Date.now(),
      )
      .then(
        (outcome) => answers.push(`first ${outcome.kind}`),
        (error: unknown) => answers.push(`first failed: ${String(error)}`),
      );
    await ahead;
    assert.ok(behind, 'sent() was called before the answer');
    const outcome = (await behind) as { kind: string };
    answers.push(`second ${outcome.kind}`);
    return answers;
  };

  void it('a batch sent behind one in the database waits for it and commits on top of it', async () => {
    const from = await cellVersion();
    const before = await counts();
    const answers = await oneBehindAnother(
      request(
        { leaseEpoch: 1, fromVersion: from, create: null },
        { ...write(from + 1), statements: slowly() },
      ),
      request({ leaseEpoch: 1, fromVersion: from + 1, create: null }, write(from + 2)),
    );
    assert.deepEqual(answers, ['first committed', 'second committed']);
    assert.equal(await cellVersion(), from + 2);
    assert.deepEqual(
      await counts(),
      before.map((n) => n + 2),
    );
  });

  void it('a batch sent behind one that rolls back is refused by its fence and writes nothing', async () => {
    const from = await cellVersion();
    const before = await counts();
    const answers = await oneBehindAnother(
      request(
        { leaseEpoch: 1, fromVersion: from, create: null },
        // Fails after its sleep, holding the row meanwhile: the second batch waits for it.
        { ...write(from + 1), statements: slowly('SELECT * FROM no_such_table') },
      ),
      request({ leaseEpoch: 1, fromVersion: from + 1, create: null }, write(from + 2)),
    );
    assert.match(answers[0]!, /^first failed/);
    assert.equal(answers[1], 'second fenced');
    assert.equal(await cellVersion(), from);
    assert.deepEqual(await counts(), before, 'neither batch wrote a row');
    // The version the failed batch would have taken is free for a new decision.
    const decidedAgain = await store.commit(
      request({ leaseEpoch: 1, fromVersion: from, create: null }, write(from + 1)),
      Date.now(),
    );
    assert.equal(decidedAgain.kind, 'committed');
  });

  void it('writes hostile values byte for byte, and nothing they say runs as SQL', async () => {
    const hostile = [
      "'); DROP TABLE room_outbox; --",
      'back\\slash \\\' quote " double',
      'nul\u0000 and ctrl-Z \u001a',
      '? ?? :name $1 %s',
      'line\nbreak\r\ttab',
      '表情 😀 emoji',
    ];
    const hostileKey = { appCode: 'default', roomId: `?'\\-${randomUUID().slice(0, 8)}` };
    const earlierRows = await counts();
    const requestIds = hostile.map((h, i) => `${h.slice(0, 60)}#${i}`);
    const batch: SqlBatchWrite = {
      toVersion: hostile.length,
      reactions: [],
      log: hostile.map((h, i) => ({
        version: i + 1,
        requestId: requestIds[i]!,
        commandType: 'Add',
        payload: JSON.stringify({ text: h }),
        events: JSON.stringify([{ type: 'Added', text: h }]),
        result: JSON.stringify({ reply: { text: h } }),
      })),
      outcomes: hostile.map((h, i) => ({
        requestId: requestIds[i]!,
        version: i + 1,
        outcome: JSON.stringify({ reply: { text: h } }),
      })),
      outbox: hostile.map((h, i) => ({
        eventId: randomUUID(),
        roomVersion: i + 1,
        eventType: 'Added',
        envelope: JSON.stringify({ text: h }),
      })),
      nextAlarmMs: null,
      snapshot: null,
      statements: [],
    };
    const created = await store.commit(
      request({ leaseEpoch: 1, fromVersion: 0, create: { kind: 'counter' } }, batch, hostileKey),
      Date.now(),
    );
    assert.equal(created.kind, 'committed');

    const log = await sql.db
      .selectFrom('room_command_log')
      .select(['request_id', 'payload', 'events', 'result'])
      .where('room_id', '=', hostileKey.roomId)
      .orderBy('version')
      .execute();
    assert.deepEqual(
      log.map((r) => [r.request_id, r.payload, r.events, r.result]),
      batch.log.map((r) => [r.requestId, r.payload, r.events, r.result]),
    );
    const outcomes = await sql.db
      .selectFrom('room_request_outcomes')
      .select(['request_id', 'outcome'])
      .where('room_id', '=', hostileKey.roomId)
      .orderBy('version')
      .execute();
    assert.deepEqual(
      outcomes.map((r) => [r.request_id, r.outcome]),
      batch.outcomes.map((o) => [o.requestId, o.outcome]),
    );
    const outbox = await sql.db
      .selectFrom('room_outbox')
      .select(['event_id', 'envelope'])
      .where('room_id', '=', hostileKey.roomId)
      .orderBy('room_version')
      .execute();
    assert.deepEqual(
      outbox.map((r) => [r.event_id, r.envelope]),
      batch.outbox.map((o) => [o.eventId, o.envelope]),
    );
    // The earlier tests' rows are still there: the DROP in a value was only text.
    assert.deepEqual(await counts(), earlierRows);
    assert.ok(earlierRows.every((n) => n > 0));
  });
});
