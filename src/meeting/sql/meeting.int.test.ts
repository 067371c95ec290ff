/**
 * The meeting on the real runtime, on SQLite + in-memory and on MariaDB + Redis: its
 * projections (rooms, participants reused on re-join, chats), and invariant 6 enforced by
 * the database: one user joining two meetings at once (on two hosts where the backend
 * allows) ends up in exactly one, even when the edge's early check is bypassed.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { CellHost } from '../../cell/host.js';
import {
  mariadbRedisBackend,
  sqliteMemoryBackend,
  silentLogger,
  startHost,
  type TestBackend,
  type TestHost,
} from '../../cell/testing/harness.js';
import type { MeetingCommand } from '../domain/types.js';
import { clusterSkipReason } from '../../testing/backends.js';
import type { AppError } from '../../shared/errors.js';
import { meetingWithSql, type MeetingSqlDomain } from './index.js';
import { sqlMeetingStore } from './store.js';
import { sqlChatRetentionStore } from './chat-retention.js';
import { MeetingChatRetention, type ChatRetentionConfig } from '../wiring/chat-retention.js';

const key = (code: string) => ({ appCode: 'default', roomId: code });

function suite(name: string, open: () => Promise<TestBackend>, skip: string | false) {
  describe(`meeting on the runtime (${name})`, { skip }, () => {
    let backend: TestBackend;
    let meeting: MeetingSqlDomain;
    const hosts: TestHost[] = [];
    const host = async () => {
      const h = await startHost(backend, { domains: [meeting] });
      hosts.push(h);
      return h.host;
    };
    let seq = 0;
    const store = () => sqlMeetingStore(backend.inspect.db);
    const newCode = async () => {
      for (;;) {
        const n = String(Math.floor(Math.random() * 1e9)).padStart(9, '0');
        const code = `${n.slice(0, 3)}-${n.slice(3, 6)}-${n.slice(6)}`;
        const got = await store().claimMeetingCode('default', `t:${++seq}`, code, Date.now());
        if (got.kind === 'claimed') return got;
      }
    };
    const run = async (h: CellHost, code: string, command: MeetingCommand, requestId?: string) => {
      const routed = await h.execute(meeting, key(code), command, requestId ? { requestId } : {});
      assert.equal(routed.kind, 'local');
      return routed.kind === 'local' ? routed.value : (undefined as never);
    };
    const pid = (code: string, user: string) =>
      store().participantIdOf('default', code, user).then(String);
    const createAs = async (h: CellHost, user: string, max = 8) => {
      const { id, room_code } = await newCode();
      await run(h, room_code, {
        type: 'CreateMeeting',
        meeting_id: id,
        host_user_id: user,
        host_participant_id: await pid(room_code, user),
        room_code,
        title: 'T',
        password_hash: null,
        max_members: max,
        in_other_meeting: false,
      });
      return { id, code: room_code };
    };
    const joinAs = async (h: CellHost, code: string, user: string) =>
      run(h, code, {
        type: 'JoinMeeting',
        user_id: user,
        participant_id: await pid(code, user),
        // Bypass the edge's early check: the database must refuse on its own.
        in_other_meeting: false,
        password: 'not_required',
      });
    const activeRow = (user: string) => store().activeMeetingOf('default', user);

    before(async () => {
      backend = await open();
      meeting = meetingWithSql(backend.inspect.flavor);
    });
    afterEach(async () => {
      for (const h of hosts.splice(0)) await h.kill();
    });
    after(async () => {
      await backend?.close();
    });

    it('projects rooms, participants (re-join reuses the row) and chats in the commit', async () => {
      const h = await host();
      const { id, code } = await createAs(h, '100');
      await joinAs(h, code, '101');
      await run(h, code, { type: 'SendChat', user_id: '101', content: '你好' });
      await run(h, code, { type: 'LeaveMeeting', user_id: '101' });
      const firstRow = await backend.inspect.db
        .selectFrom('meeting_participants')
        .selectAll()
        .where('room_code', '=', code)
        .where('user_id', '=', '101')
        .executeTakeFirstOrThrow();
      assert.equal(firstRow.left_reason, 'leave');
      assert.notEqual(firstRow.left_at_ms, null);
      assert.equal(await activeRow('101'), null, 'leaving released the single-meeting index');
      await joinAs(h, code, '101');
      await run(h, code, { type: 'TransferHost', operator_user_id: '100', target_user_id: '101' });
      const rows = await backend.inspect.db
        .selectFrom('meeting_participants')
        .selectAll()
        .where('room_code', '=', code)
        .orderBy('id')
        .execute();
      assert.equal(rows.length, 2, 're-join reused the row');
      assert.equal(Number(rows[1]!.id), Number(firstRow.id));
      assert.deepEqual(
        rows.map((r) => [r.user_id, Number(r.role), r.left_at_ms, Number(r.duration)]),
        [
          ['100', 0, null, 0],
          ['101', 1, null, 0],
        ],
      );
      const room = await backend.inspect.db
        .selectFrom('meeting_rooms')
        .selectAll()
        .where('room_code', '=', code)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        [Number(room.id), room.host_id, Number(room.status), Number(room.online_count)],
        [id, '101', 1, 2],
      );
      const chats = await store().listChats('default', code, { limit: 10 });
      assert.deepEqual(
        chats.list.map((c) => [c.message_id, c.user_id, c.content]),
        [[1, '101', '你好']],
      );
      await run(h, code, { type: 'EndMeeting', operator_user_id: '101' });
      const ended = await backend.inspect.db
        .selectFrom('meeting_rooms')
        .select(['status', 'ended_reason', 'online_count', 'ended_at_ms'])
        .where('room_code', '=', code)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        [Number(ended.status), ended.ended_reason, Number(ended.online_count)],
        [2, 'host_ended', 0],
      );
      assert.notEqual(ended.ended_at_ms, null);
      assert.deepEqual([await activeRow('100'), await activeRow('101')], [null, null]);
      const left = await backend.inspect.db
        .selectFrom('meeting_participants')
        .select('left_reason')
        .where('room_code', '=', code)
        .execute();
      assert.deepEqual(
        left.map((r) => r.left_reason),
        ['host_end', 'host_end'],
      );
    });

    it('a leave and a re-join decided in one batch keep the user in the index', async () => {
      const h = await host();
      const { code } = await createAs(h, '200');
      await joinAs(h, code, '201');
      const participant = await pid(code, '201');
      // Queued together: the mailbox decides them in one batch (group commit).
      await Promise.all([
        run(h, code, { type: 'LeaveMeeting', user_id: '201' }),
        run(h, code, {
          type: 'JoinMeeting',
          user_id: '201',
          participant_id: participant,
          in_other_meeting: false,
          password: 'not_required',
        }),
      ]).catch(() => undefined);
      const state = await h.query(meeting, key(code), (s) => s);
      const active =
        state.kind === 'local' &&
        state.value.participants.some((p) => p.user_id === '201' && p.left_at_ms === null);
      assert.equal(await activeRow('201'), active ? code : null);
    });

    it('one user joining two meetings at once (two hosts when possible) gets into exactly one', async () => {
      const a = await host();
      const b = backend.concurrentTransactions ? await host() : a;
      for (let round = 0; round < 5; round++) {
        const m1 = await createAs(a, `30${round}a`);
        const m2 = await createAs(b, `30${round}b`);
        const user = `31${round}`;
        const results = await Promise.allSettled([
          joinAs(a, m1.code, user),
          joinAs(b, m2.code, user),
        ]);
        const won = results.filter((r) => r.status === 'fulfilled');
        assert.equal(won.length, 1, `round ${round}: ${JSON.stringify(results)}`);
        const lost = results.find((r) => r.status === 'rejected')!.reason as AppError;
        assert.deepEqual([lost.code, lost.message], ['IN_OTHER_MEETING', '你当前已在其他会议中']);
        const winner = results[0].status === 'fulfilled' ? m1.code : m2.code;
        assert.equal(await activeRow(user), winner);
      }
    });

    it('20 joins racing for a meeting of 8: exactly 7 join (the host is the 8th)', async () => {
      const h = await host();
      const { code } = await createAs(h, '400', 8);
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => joinAs(h, code, `41${i}`)),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 7);
      for (const r of results) {
        if (r.status === 'rejected') assert.equal((r.reason as AppError).code, 'MEETING_FULL');
      }
      const room = await backend.inspect.db
        .selectFrom('meeting_rooms')
        .select('online_count')
        .where('room_code', '=', code)
        .executeTakeFirstOrThrow();
      assert.equal(Number(room.online_count), 8);
    });

    it('chat retention deletes only the chats of meetings ended longer ago, in bounded batches', async () => {
      const h = await host();
      /** The chats of one meeting, or of every meeting (earlier tests' ended ones too). */
      const chats = async (code?: string) =>
        Number(
          (
            await backend.inspect.db
              .selectFrom('meeting_chats')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('room_code', 'like', code ?? '%')
              .executeTakeFirstOrThrow()
          ).n,
        );
      const endedAt = async (code: string) =>
        Number(
          (
            await backend.inspect.db
              .selectFrom('meeting_rooms')
              .select('ended_at_ms')
              .where('room_code', '=', code)
              .executeTakeFirstOrThrow()
          ).ended_at_ms,
        );
      const meetingWithChats = async (user: string, n: number, end: boolean) => {
        const { code } = await createAs(h, user);
        for (let i = 0; i < n; i++) {
          await run(h, code, { type: 'SendChat', user_id: user, content: `m${i}` });
        }
        if (end) await run(h, code, { type: 'EndMeeting', operator_user_id: user });
        return code;
      };
      const old = await meetingWithChats('700', 5, true);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const recent = await meetingWithChats('701', 2, true);
      const live = await meetingWithChats('702', 2, false);
      assert.ok((await endedAt(old)) < (await endedAt(recent)));
      const retentionMs = 60_000;
      // The line: exactly the recent meeting's end, retention ago ("ended before" is strict).
      let now = (await endedAt(recent)) + retentionMs;
      const clock = { nowMs: () => now };
      const retention = (config: Partial<ChatRetentionConfig> = {}) =>
        new MeetingChatRetention(
          { retentionMs, ...config },
          { store: sqlChatRetentionStore(backend.inspect.db), clock, logger: silentLogger },
        );
      assert.equal(await retention({ retentionMs: 0 }).sweep(), 0, '0 disables');
      assert.equal(await chats(old), 5);
      // Two nodes at once, each one DELETE of at most 2 rows.
      const small = { batchSize: 2, maxBatchesPerSweep: 1 };
      const total = await chats();
      const [a, b] = await Promise.all([retention(small).sweep(), retention(small).sweep()]);
      assert.ok(a <= 2 && b <= 2 && a + b >= 2, `bounded batches: ${a} + ${b}`);
      assert.equal(await chats(), total - a - b, 'each deleted row counted once');
      const node = retention({ batchSize: 2 });
      await node.sweep();
      assert.deepEqual(
        [await chats(old), await chats(recent), await chats(live)],
        [0, 2, 2],
        'only the meeting ended before the line lost its chats',
      );
      now += 1;
      assert.equal(await node.sweep(), 2, 'the line moved past the recent meeting');
      assert.deepEqual([await chats(recent), await chats(live)], [0, 2]);
      now += 365 * 86_400_000;
      await node.sweep();
      assert.equal(await chats(live), 2, 'a meeting in progress keeps its chats');
      await run(h, live, { type: 'EndMeeting', operator_user_id: '702' });
    });

    it('the id allocators give every retry the same id', async () => {
      const s = store();
      const first = await s.claimMeetingCode('default', 'req-x', '111-111-111', 1);
      const again = await s.claimMeetingCode('default', 'req-x', '222-222-222', 2);
      assert.deepEqual(again, first, 'the request keeps its first code');
      assert.deepEqual(await s.claimMeetingCode('default', 'req-y', '111-111-111', 3), {
        kind: 'taken',
      });
      const ids = await Promise.all(
        Array.from({ length: 5 }, () => s.participantIdOf('default', '111-111-111', 'u')),
      );
      assert.equal(new Set(ids).size, 1);
      assert.notEqual(await s.participantIdOf('default', '111-111-111', 'v'), ids[0]);
    });
  });
}

suite('SQLite + in-memory', sqliteMemoryBackend, false);
suite('MariaDB + Redis', mariadbRedisBackend, await clusterSkipReason());
