/**
 * The public chat and the gift rankings on two nodes (MariaDB + Redis), through REST as
 * clients call it: a message sent on one node is in the history on the other, with the
 * sender's nickname, and its retry there is the same message; a chat mute and a message at
 * the same moment on two nodes end in one order, each answer the same on retry; deletions
 * by the sender and a manager only; the per-user rate limit counted across nodes; and after
 * a burst of concurrent and retried gifts on both nodes, every ranking total is the sum of
 * the room's gift ledger rows, and followers get `voice.ranking.changed`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GrpcForwarder } from '../../edge/grpc/room-service.js';
import { TestClient } from '../../edge/ws/testing/ws-client.js';
import type { MeetingClient } from '../../meeting/api/testing/meeting-client.js';
import { clusterSkipReason } from '../../testing/backends.js';
import { rankingDay } from '../sql/rankings.js';
import {
  okData,
  sameAnswer,
  startTwoNodes,
  type Answer,
  type TwoNodes,
} from './testing/two-nodes.js';

const skip = await clusterSkipReason();
const ADMIN = 'chat-rankings-admin-token-0123456789';
const CHATS_PER_WINDOW = 4;

describe('voice-room chat and rankings on two nodes', { skip, timeout: 180_000 }, () => {
  let cluster: TwoNodes;
  let nodes: TwoNodes['nodes'];
  let api: MeetingClient;

  before(async () => {
    cluster = await startTwoNodes('chat-rankings', ['ona', 'adam', 'ulla', 'uwe', 'ida', 'rita'], {
      ROOMS_ADMIN_TOKEN: ADMIN,
      ROOMS_VOICE_CHATS_PER_USER: String(CHATS_PER_WINDOW),
      ROOMS_VOICE_CHAT_WINDOW_S: '600',
    });
    ({ nodes, api } = cluster);
  });
  after(() => cluster?.close());

  const call = (
    node: 0 | 1,
    method: 'GET' | 'POST',
    who: string | undefined,
    path: string,
    body?: object,
    headers?: Record<string, string>,
  ): Promise<Answer> =>
    api.call(method, path, {
      ...(who ? { as: who } : {}),
      ...(body ? { body } : {}),
      ...(headers ? { headers } : {}),
      via: nodes[node].http,
    });
  const ok = okData;
  const same = sameAnswer;
  /** A room owned by ona, adam its admin, `present` joined. */
  const newRoom = async (present: string[]) => {
    const { room_id } = (await ok(call(0, 'POST', 'ona', '/voice/rooms', { title: '公屏' }))) as {
      room_id: string;
    };
    for (const who of ['ona', 'adam', ...present]) {
      await ok(call(0, 'POST', who, `/voice/rooms/${room_id}/join`));
    }
    await ok(
      call(0, 'POST', 'ona', `/voice/rooms/${room_id}/admins`, {
        user_id: api.ids.adam,
        is_admin: true,
      }),
    );
    return room_id;
  };
  const say = (node: 0 | 1, who: string, roomId: string, content: string, request_id?: string) =>
    call(node, 'POST', who, `/voice/rooms/${roomId}/messages`, {
      content,
      ...(request_id ? { request_id } : {}),
    });
  const history = async (node: 0 | 1, who: string, roomId: string, query = '') =>
    (await ok(call(node, 'GET', who, `/voice/rooms/${roomId}/messages${query}`))) as {
      messages: {
        message_id: number;
        user_id: number;
        user_name: string;
        content: string;
        at_ms: number;
      }[];
      has_more: boolean;
    };

  it('a message on one node is in the history on the other, and its retry is the same message', async () => {
    const roomId = await newRoom(['ulla']);
    const first = await say(1, 'ulla', roomId, '  大家好 🎤 ', 'hello-1');
    const sent = first.body.data as { message_id: number; duplicate: boolean };
    assert.deepEqual([first.status, sent.message_id, sent.duplicate], [200, 1, false]);
    const retry = await say(0, 'ulla', roomId, '  大家好 🎤 ', 'hello-1');
    assert.deepEqual(same(retry), same(first));
    assert.equal((retry.body.data as { duplicate: boolean }).duplicate, true);
    // The same request id for another message is another request: refused, nothing sent.
    const reused = await say(0, 'ulla', roomId, 'something else', 'hello-1');
    assert.deepEqual([reused.status, reused.body.reason], [409, 'REQUEST_ID_REUSED']);
    for (const n of [2, 3]) await ok(say(0, 'ona', roomId, `line ${n}`));
    const page = await history(0, 'adam', roomId, '?limit=2');
    assert.deepEqual(
      page.messages.map((m) => [m.message_id, m.content]),
      [
        [3, 'line 3'],
        [2, 'line 2'],
      ],
    );
    assert.equal(page.has_more, true);
    const older = await history(1, 'ulla', roomId, '?before_id=2');
    assert.deepEqual(older.messages, [
      {
        message_id: 1,
        user_id: api.ids.ulla,
        user_name: 'ulla_user',
        content: '大家好 🎤',
        at_ms: older.messages[0]!.at_ms,
      },
    ]);
    assert.equal(older.has_more, false);
    // before_id 0 (a generated client's default) is the newest page; text is refused.
    assert.equal((await history(0, 'ona', roomId, '?before_id=0')).messages.length, 3);
    const notANumber = await call(0, 'GET', 'ona', `/voice/rooms/${roomId}/messages?before_id=x`);
    assert.equal(notANumber.status, 400);
    // Only present members read it; bad input changes nothing.
    const outsider = await call(1, 'GET', 'ida', `/voice/rooms/${roomId}/messages`);
    assert.deepEqual([outsider.status, outsider.body.reason], [400, 'NOT_IN_ROOM']);
    for (const content of ['', ' ', 'x'.repeat(501), 'a\u0007b']) {
      const bad = await say(1, 'ulla', roomId, content);
      assert.deepEqual([bad.status, bad.body.reason], [400, 'INVALID_ARGUMENT'], content);
    }
    const notText = await call(1, 'POST', 'ulla', `/voice/rooms/${roomId}/messages`, {
      content: 7,
    });
    assert.equal(notText.status, 400);
    assert.equal((await history(0, 'ona', roomId)).messages.length, 3);
  });

  it('a chat mute and a message at once on two nodes: one order, each answer the same on retry', async () => {
    const roomId = await newRoom(['uwe']);
    const mute = () =>
      call(0, 'POST', 'adam', `/voice/rooms/${roomId}/chat-mutes`, {
        user_id: api.ids.uwe,
        duration_s: 600,
        request_id: 'mute-uwe',
      });
    const message = (node: 0 | 1) => say(node, 'uwe', roomId, 'now or never', 'uwe-line');
    const [muted, said] = await Promise.all([mute(), message(1)]);
    assert.equal(muted.status, 200, JSON.stringify(muted.body));
    const kept = (await history(1, 'ona', roomId)).messages;
    if (said.status === 200) {
      assert.deepEqual(
        kept.map((m) => m.content),
        ['now or never'],
      );
    } else {
      assert.deepEqual([said.status, said.body.reason], [403, 'CHAT_MUTED']);
      assert.deepEqual(kept, []);
    }
    assert.deepEqual(same(await message(0)), same(said));
    assert.deepEqual(same(await mute()), same(muted));
    // Muted now, whatever the order was, also after leaving and coming back.
    await ok(call(1, 'POST', 'uwe', `/voice/rooms/${roomId}/leave`));
    await ok(call(1, 'POST', 'uwe', `/voice/rooms/${roomId}/join`));
    const later = await say(1, 'uwe', roomId, 'let me talk');
    assert.deepEqual([later.status, later.body.reason], [403, 'CHAT_MUTED']);
    // A plain member mutes nobody, an admin not the owner; lifting works.
    const byMember = await call(1, 'POST', 'uwe', `/voice/rooms/${roomId}/chat-mutes`, {
      user_id: api.ids.adam,
      duration_s: 60,
    });
    assert.deepEqual([byMember.status, byMember.body.reason], [403, 'NOT_ADMIN']);
    const owner = await call(1, 'POST', 'adam', `/voice/rooms/${roomId}/chat-mutes`, {
      user_id: api.ids.ona,
      duration_s: 60,
    });
    assert.deepEqual([owner.status, owner.body.reason], [403, 'CANNOT_TARGET_OWNER']);
    await ok(
      call(1, 'POST', 'ona', `/voice/rooms/${roomId}/chat-mutes`, {
        user_id: api.ids.uwe,
        duration_s: 0,
      }),
    );
    await ok(say(0, 'uwe', roomId, 'thanks'));
  });

  it('deletes a message for its sender or a manager only; the history leaves it out', async () => {
    const roomId = await newRoom(['ulla', 'uwe']);
    await ok(say(0, 'ulla', roomId, 'mine'));
    await ok(say(0, 'uwe', roomId, 'his'));
    const del = (node: 0 | 1, who: string, message_id: unknown) =>
      call(node, 'POST', who, `/voice/rooms/${roomId}/messages/delete`, { message_id });
    const notHers = await del(1, 'ulla', 2);
    assert.deepEqual([notHers.status, notHers.body.reason], [403, 'NOT_ADMIN']);
    await ok(del(1, 'ulla', 1));
    await ok(del(0, 'adam', 2));
    const again = await del(1, 'adam', 2);
    assert.equal(again.status, 200, 'a deleted message stays deleted');
    const none = await del(1, 'adam', 99);
    assert.deepEqual([none.status, none.body.reason], [404, 'MESSAGE_NOT_FOUND']);
    for (const bad of ['1', 0, 1.5, null]) assert.equal((await del(1, 'adam', bad)).status, 400);
    assert.deepEqual((await history(1, 'ona', roomId)).messages, []);
  });

  it('counts the rate limit across nodes, and a decided retry past it gets its first answer', async () => {
    const roomId = await newRoom(['rita']);
    const answers: Answer[] = [];
    for (let i = 0; i < CHATS_PER_WINDOW; i++) {
      answers.push(await say((i % 2) as 0 | 1, 'rita', roomId, `m${i}`, `rate-${i}`));
    }
    assert.ok(answers.every((a) => a.status === 200));
    const over = await say(1, 'rita', roomId, 'one too many', 'rate-over');
    assert.deepEqual([over.status, over.body.reason], [429, 'CHAT_RATE_LIMITED']);
    const retry = await say(0, 'rita', roomId, 'm0', 'rate-0');
    assert.deepEqual(same(retry), same(answers[0]!));
    assert.equal((await history(0, 'rita', roomId)).messages.length, CHATS_PER_WINDOW);
  });

  it('keeps every ranking total equal to the room ledger after concurrent, retried gifts on two nodes', async () => {
    const senders = ['ulla', 'uwe', 'ida'];
    const receivers = ['ona', 'adam', 'rita'];
    const roomId = await newRoom([...senders, 'rita']);
    const admin = { 'x-admin-token': ADMIN };
    for (const [gift, price] of [
      ['rose', 7],
      ['car', 50],
    ] as const) {
      const put = await nodes[0].http.inject({
        method: 'PUT',
        url: `/api/v1/admin/gifts/${gift}`,
        headers: admin,
        payload: { name: gift, price },
      });
      assert.equal(put.statusCode, 200, put.body);
    }
    for (const who of senders) {
      await ok(
        call(
          0,
          'POST',
          undefined,
          '/admin/wallets/topup',
          { user_id: api.ids[who], amount: 1_000, request_id: `top-${who}` },
          admin,
        ),
      );
    }
    const socket = await TestClient.connect(`${addressOf(1)}/ws?token=${api.tokens.rita}`);
    try {
      assert.equal((await socket.request('room.subscribe', { room_id: roomId })).code, 0);
      const gifts = Array.from({ length: 24 }, (_, i) => ({
        who: senders[i % 3]!,
        body: {
          receiver_user_ids:
            i % 4 === 0 ? [api.ids.ona, api.ids.rita] : [api.ids[receivers[i % 3]!]],
          gift_id: i % 5 === 0 ? 'car' : 'rose',
          count: 1 + (i % 3),
          request_id: `gift-${i}`,
        },
      }));
      // Each gift sent twice at once, to both nodes; some run out of money (refused, uncharged).
      await Promise.all(
        gifts.flatMap((g) =>
          [0, 1].map((node) =>
            call(node as 0 | 1, 'POST', g.who, `/voice/rooms/${roomId}/gifts`, g.body),
          ),
        ),
      );
      const db = nodes[0].sql.db;
      const ledger = await db
        .selectFrom('wallet_ledger')
        .select(['user_id', 'amount', 'detail'])
        .where('room_id', '=', roomId)
        .where('kind', '=', 'gift')
        .execute();
      assert.ok(ledger.length >= 10, `gifts charged: ${ledger.length}`);
      const expected = {
        contribution: new Map<string, number>(),
        charm: new Map<string, number>(),
      };
      const add = (m: Map<string, number>, u: string, v: number) => m.set(u, (m.get(u) ?? 0) + v);
      for (const row of ledger) {
        add(expected.contribution, row.user_id, -Number(row.amount));
        const d = JSON.parse(row.detail) as {
          count: number;
          unit_price: number;
          receiver_user_ids: string[];
        };
        for (const r of d.receiver_user_ids) add(expected.charm, r, d.count * d.unit_price);
      }
      const stored = await db
        .selectFrom('voice_room_rankings')
        .selectAll()
        .where('room_id', '=', roomId)
        .execute();
      const today = rankingDay(Date.now(), 'UTC');
      for (const board of ['contribution', 'charm'] as const) {
        const rows = stored.filter((r) => r.board === board);
        assert.deepEqual(
          new Map(rows.map((r) => [r.user_id, Number(r.total)])),
          expected[board],
          `${board}, all time`,
        );
        assert.deepEqual(
          new Map(rows.filter((r) => r.day === today).map((r) => [r.user_id, Number(r.day_total)])),
          expected[board],
          `${board}, today`,
        );
        // The API's top, largest first, the same on both nodes.
        const tops = await Promise.all(
          [0, 1].map((node) =>
            ok(
              call(
                node as 0 | 1,
                'GET',
                'ida',
                `/voice/rooms/${roomId}/rankings?board=${board}&period=all&limit=2`,
              ),
            ),
          ),
        );
        assert.deepEqual(tops[0], tops[1]);
        const entries = (
          tops[0] as {
            entries: { rank: number; user_id: number; total: number; user_name: string }[];
          }
        ).entries;
        const best = [...expected[board].entries()].sort((a, b) => b[1] - a[1]).slice(0, 2);
        assert.deepEqual(
          entries.map((e) => e.total),
          best.map(([, t]) => t),
        );
        assert.deepEqual(
          entries.map((e) => e.rank),
          [1, 2],
        );
        assert.match(entries[0]!.user_name, /_user$/);
      }
      // Followers hear the new top (at most once a second), with the charm board's leader.
      const frame = await socket.waitFor((f) => f.event === 'voice.ranking.changed', 10_000);
      const charm = frame.data.charm as { all: { total: number }[] };
      assert.ok(charm.all.length > 0);
      const bad = await call(
        0,
        'GET',
        'ida',
        `/voice/rooms/${roomId}/rankings?board=fans&period=all`,
      );
      assert.equal(bad.status, 400);
      const noPeriod = await call(0, 'GET', 'ida', `/voice/rooms/${roomId}/rankings?board=charm`);
      assert.equal(noPeriod.status, 400);
    } finally {
      socket.ws.close();
    }
  });

  it('takes the chat and the rankings over gRPC: messages, history paging, a board', async () => {
    const roomId = await newRoom(['ida']);
    const client = new GrpcForwarder({ token: cluster.grpcToken, tls: null, markForwarded: false });
    const addr = `127.0.0.1:${nodes[1].voice.grpcPort}`;
    const ida = String(api.ids.ida);
    try {
      const sent = (await client.call(addr, 'SendRoomMessage', {
        room_id: roomId,
        request_id: 'grpc-line',
        user_id: ida,
        content: 'over gRPC',
      })) as { message_id: number; duplicate: boolean };
      assert.deepEqual([sent.message_id, sent.duplicate], [1, false]);
      const again = (await client.call(addr, 'SendRoomMessage', {
        room_id: roomId,
        request_id: 'grpc-line',
        user_id: ida,
        content: 'over gRPC',
      })) as { message_id: number; duplicate: boolean };
      assert.deepEqual([again.message_id, again.duplicate], [1, true]);
      const page = (await client.call(addr, 'ListRoomMessages', {
        room_id: roomId,
        user_id: ida,
      })) as { messages: { user_id: string; content: string }[]; has_more: boolean };
      assert.deepEqual(
        page.messages.map((m) => [m.user_id, m.content]),
        [[ida, 'over gRPC']],
      );
      const board = (await client.call(addr, 'GetRankings', {
        room_id: roomId,
        board: 'charm',
        period: 'day',
      })) as { entries: unknown[]; day: string };
      assert.deepEqual(board.entries, []);
      assert.match(board.day, /^\d{4}-\d{2}-\d{2}$/);
      await assert.rejects(
        client.call(addr, 'MuteChatUser', {
          room_id: roomId,
          request_id: 'grpc-mute',
          operator_user_id: ida,
          user_id: String(api.ids.ona),
          duration_s: 60,
        }),
        { code: 'NOT_ADMIN' },
      );
    } finally {
      client.close();
    }
  });

  function addressOf(node: 0 | 1): string {
    const address = nodes[node].http.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    return `ws://127.0.0.1:${address.port}`;
  }
});
