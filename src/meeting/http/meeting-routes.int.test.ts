/**
 * Meetings REST (meeting-api.md) on a real node's HTTP app (embedded SQLite + in-memory),
 * through inject: one happy path per endpoint, every refusal of the seed's table that REST
 * can reach with its exact message and status, strict bodies, the join check order, the
 * password lockout, re-joins, retries by request id, and races.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';
import { meetingClient } from '../api/testing/meeting-client.js';

const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const CODE = /^\d{3}-\d{3}-\d{3}$/;

describe('meetings REST', () => {
  let app: TestHttpApp;
  const c = meetingClient(() => app.http);
  const { call, ids } = c;
  const names = ['host', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8', 'u9'];

  before(async () => {
    // These tests name unknown codes on purpose, more than the lookup limit allows.
    app = await startTestHttpApp({
      ROOMS_MEETING_LOOKUP_FAILS_PER_USER: '0',
      ROOMS_MEETING_LOOKUP_FAILS_PER_ADDRESS: '0',
    });
    await c.users([...names, ...Array.from({ length: 20 }, (_, i) => `r${i}`)]);
  });
  after(async () => {
    await app?.close();
  });

  /** Every test's users start outside any meeting: end what a test left open. */
  const open: { code: string; host: string }[] = [];
  const create = async (as: string, body: Record<string, unknown> = {}) => {
    const r = await call('POST', '/meeting/rooms', { as, body: { title: '周会', ...body } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const code = r.body.data.room.room_code as string;
    open.push({ code, host: as });
    return { code, data: r.body.data };
  };
  const join = (as: string, code: string, body: Record<string, unknown> = {}) =>
    call('POST', `/meeting/rooms/${code}/join`, { as, body });
  const fail = (r: { status: number; body: { code: number; message: string } }) => [
    r.status,
    r.body.code,
    r.body.message,
  ];
  const endAll = async () => {
    for (const { code, host } of open.splice(0)) {
      await call('POST', `/meeting/rooms/${code}/end`, { as: host, body: {} });
    }
  };

  it('create answers 201 with the seed room fields; the host is its first participant', async () => {
    const { code, data } = await create('host', { max_members: 4 });
    assert.match(code, CODE);
    const room = data.room;
    assert.equal(typeof room.id, 'number');
    assert.deepEqual(
      {
        title: room.title,
        host_id: room.host_id,
        type: room.type,
        has_password: room.has_password,
        max_members: room.max_members,
        status: room.status,
        status_label: room.status_label,
        settings: room.settings,
        online_count: room.online_count,
      },
      {
        title: '周会',
        host_id: ids.host,
        type: 1,
        has_password: false,
        max_members: 4,
        status: 1,
        status_label: '进行中',
        settings: '{}',
        online_count: 1,
      },
    );
    assert.match(room.started_at, TIME);
    assert.match(room.created_at, TIME);
    assert.equal(data.router_id, null);
    assert.equal(data.rtp_capabilities, null);
    assert.ok(!JSON.stringify(data).includes('$2'), 'no password hash anywhere');
    const detail = await call('GET', `/meeting/rooms/${code}`, { as: 'host' });
    assert.equal(detail.status, 200);
    assert.deepEqual(
      detail.body.data.participants.map(
        (p: { user_id: number; role: number; role_label: string }) => [
          p.user_id,
          p.role,
          p.role_label,
        ],
      ),
      [[ids.host, 1, '主持人']],
    );
    assert.equal(detail.body.data.participants[0].room_id, room.id);
    await endAll();
  });

  it('max_members above 8 is truncated to 8; bad bodies answer 400 and create nothing', async () => {
    const { data } = await create('host', { max_members: 100 });
    assert.equal(data.room.max_members, 8);
    await endAll();
    const bad: unknown[] = [
      { title: '' },
      { title: 'x'.repeat(201) },
      { title: 5 },
      {},
      { title: 'ok', password: 'abc' },
      { title: 'ok', password: 'p'.repeat(21) },
      { title: 'ok', password: 1234 },
      { title: 'ok', max_members: 1 },
      { title: 'ok', max_members: '4' },
      { title: 'ok', max_members: 4.5 },
      { title: 'ok', max_members: true },
      { title: 'ok', max_members: null },
      { title: 'ok', extra: 1 },
      { title: 'ok', caller_id: '1' },
      { title: 'ok', app_code: 'other' },
      [1],
    ];
    for (const body of bad) {
      const r = await call('POST', '/meeting/rooms', { as: 'u1', body });
      assert.equal(r.status, 400, `${JSON.stringify(body)} → ${JSON.stringify(r.body)}`);
      assert.equal(r.body.code, 400);
    }
    const mine = await call('GET', '/meeting/rooms/mine', { as: 'u1' });
    assert.deepEqual(mine.body.data.list, [], 'nothing was created');
    const title200 = await create('u1', { title: '会'.repeat(200) });
    assert.equal(title200.data.room.title.length, 200);
    await endAll();
  });

  it('refuses without a token, and with a bad one', async () => {
    assert.equal((await call('POST', '/meeting/rooms', { body: { title: 't' } })).status, 401);
    const bad = await call('GET', '/meeting/rooms/mine', {
      headers: { authorization: 'Bearer nope' },
    });
    assert.equal(bad.status, 401);
  });

  it('会议不存在 (404) for an unknown or malformed code, on every room endpoint', async () => {
    for (const code of ['000-000-000', 'abc', '123456789', '000-000-0000']) {
      for (const [method, path] of [
        ['GET', ''],
        ['POST', '/join'],
        ['POST', '/leave'],
        ['POST', '/end'],
        ['GET', '/chats'],
      ] as const) {
        const r = await call(method, `/meeting/rooms/${code}${path}`, {
          as: 'u1',
          ...(method === 'POST' ? { body: {} } : {}),
        });
        assert.deepEqual(fail(r), [404, 404, '会议不存在'], `${method} ${code}${path}`);
      }
    }
  });

  it('join, detail, chat, leave, re-join (same participant row), end: the happy paths', async () => {
    const { code, data } = await create('host');
    const joined = await join('u1', code);
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
    const p = joined.body.data.participant;
    assert.deepEqual(
      [p.user_id, p.role, p.role_label, p.is_active, p.room_id, p.duration],
      [ids.u1, 0, '参会者', true, data.room.id, 0],
    );
    assert.equal(typeof p.id, 'number');
    assert.match(p.joined_at, TIME);
    assert.equal(joined.body.data.room.online_count, 2);
    assert.equal(joined.body.data.router_id, null);
    assert.equal(joined.body.data.rtp_capabilities, null);

    const detail = await call('GET', `/meeting/rooms/${code}`, { as: 'u1' });
    assert.equal(detail.body.data.online_count, 2);
    assert.deepEqual(
      detail.body.data.participants.map((x: { user_id: number }) => x.user_id),
      [ids.host, ids.u1],
    );

    const sent = await call('POST', `/meeting/rooms/${code}/chats`, {
      as: 'u1',
      body: { content: 'hello' },
    });
    assert.equal(sent.status, 201);
    const m = sent.body.data.message;
    assert.deepEqual([m.id, m.room_id, m.user_id, m.content], [1, data.room.id, ids.u1, 'hello']);
    assert.match(m.created_at, TIME);

    const left = await call('POST', `/meeting/rooms/${code}/leave`, { as: 'u1', body: {} });
    assert.equal(left.status, 200);
    assert.equal(typeof left.body.data.duration, 'number');
    const after1 = await call('GET', `/meeting/rooms/${code}`, { as: 'host' });
    assert.deepEqual(
      after1.body.data.participants.map((x: { user_id: number }) => x.user_id),
      [ids.host],
      'active participants only',
    );
    assert.deepEqual(fail(await call('GET', `/meeting/rooms/${code}`, { as: 'u1' })), [
      400,
      400,
      '你当前未在会议中',
    ]);
    const again = await join('u1', code);
    assert.equal(again.status, 200);
    assert.equal(again.body.data.participant.id, p.id, 're-join reuses the participant row');
    assert.equal(again.body.data.participant.duration, 0);

    const ended = await call('POST', `/meeting/rooms/${code}/end`, { as: 'host', body: {} });
    assert.equal(ended.status, 200);
    assert.deepEqual(
      [ended.body.data.room.status, ended.body.data.room.status_label],
      [2, '已结束'],
    );
    open.splice(0);
    assert.deepEqual(fail(await join('u2', code)), [400, 400, '会议已结束']);
    // Ending released everyone: both may create or join elsewhere.
    await create('u1');
    await endAll();
  });

  it('GET /rooms/mine: hosted and joined, id DESC, status filter, before_id cursor, has_more', async () => {
    const a = await create('u2');
    await call('POST', `/meeting/rooms/${a.code}/end`, { as: 'u2', body: {} });
    open.splice(0);
    const b = await create('u3');
    assert.equal((await join('u2', b.code)).status, 200);
    const mine = await call('GET', '/meeting/rooms/mine', { as: 'u2' });
    assert.equal(mine.status, 200);
    const list = mine.body.data.list as { id: number; room_code: string; status: number }[];
    assert.deepEqual(
      list.map((r) => r.room_code),
      [b.code, a.code],
    );
    assert.ok(list[0]!.id > list[1]!.id);
    assert.equal(mine.body.data.has_more, false);
    const ended = await call('GET', '/meeting/rooms/mine?status=2', { as: 'u2' });
    assert.deepEqual(
      ended.body.data.list.map((r: { room_code: string }) => r.room_code),
      [a.code],
    );
    const page = await call('GET', '/meeting/rooms/mine?limit=1', { as: 'u2' });
    assert.deepEqual([page.body.data.list.length, page.body.data.has_more], [1, true]);
    const next = await call('GET', `/meeting/rooms/mine?limit=1&before_id=${list[0]!.id}`, {
      as: 'u2',
    });
    assert.deepEqual(
      next.body.data.list.map((r: { room_code: string }) => r.room_code),
      [a.code],
    );
    for (const q of ['status=x', 'limit=-1', 'before_id=1e3', 'status=3', 'limit=0x10']) {
      assert.equal((await call('GET', `/meeting/rooms/mine?${q}`, { as: 'u2' })).status, 400, q);
    }
    await endAll();
  });

  it('chat history: newest first, before_id cursor, limit, has_more; members only', async () => {
    const { code } = await create('host');
    for (let i = 1; i <= 5; i++) {
      await call('POST', `/meeting/rooms/${code}/chats`, {
        as: 'host',
        body: { content: `m${i}` },
      });
    }
    const all = await call('GET', `/meeting/rooms/${code}/chats`, { as: 'host' });
    assert.deepEqual(
      all.body.data.list.map((m: { id: number }) => m.id),
      [5, 4, 3, 2, 1],
    );
    const page = await call('GET', `/meeting/rooms/${code}/chats?before_id=4&limit=2`, {
      as: 'host',
    });
    assert.deepEqual(
      [page.body.data.list.map((m: { content: string }) => m.content), page.body.data.has_more],
      [['m3', 'm2'], true],
    );
    assert.deepEqual(fail(await call('GET', `/meeting/rooms/${code}/chats`, { as: 'u9' })), [
      400,
      400,
      '你当前未在会议中',
    ]);
    assert.deepEqual(
      fail(
        await call('POST', `/meeting/rooms/${code}/chats`, { as: 'u9', body: { content: 'x' } }),
      ),
      [400, 400, '你当前未在会议中'],
    );
    for (const content of ['', 'x'.repeat(501), 5, null]) {
      const r = await call('POST', `/meeting/rooms/${code}/chats`, {
        as: 'host',
        body: { content },
      });
      assert.equal(r.status, 400, JSON.stringify(content));
    }
    await endAll();
  });

  it('host-only actions: 仅主持人可操作 (403); self-targets and inactive targets refused', async () => {
    const { code } = await create('host');
    await join('u1', code);
    for (const [path, body] of [
      ['end', {}],
      ['transfer-host', { target_user_id: ids.host }],
      ['kick', { user_id: ids.host }],
    ] as const) {
      assert.deepEqual(
        fail(await call('POST', `/meeting/rooms/${code}/${path}`, { as: 'u1', body })),
        [403, 403, '仅主持人可操作'],
        path,
      );
    }
    const post = (path: string, body: unknown) =>
      call('POST', `/meeting/rooms/${code}/${path}`, { as: 'host', body });
    assert.deepEqual(fail(await post('kick', { user_id: ids.host })), [400, 400, '不能踢自己']);
    assert.deepEqual(fail(await post('transfer-host', { target_user_id: ids.host })), [
      400,
      400,
      '不能将主持人转让给自己',
    ]);
    assert.deepEqual(fail(await post('kick', { user_id: ids.u5 })), [
      400,
      400,
      '目标用户不是当前活跃参会者',
    ]);
    assert.deepEqual(fail(await post('transfer-host', { target_user_id: ids.u5 })), [
      400,
      400,
      '目标用户不是当前活跃参会者',
    ]);
    for (const body of [{ user_id: String(ids.u1) }, { user_id: [ids.u1] }, {}, { user_id: 1.5 }]) {
      assert.equal((await post('kick', body)).status, 400, JSON.stringify(body));
    }
    assert.equal((await post('transfer-host', { target_user_id: `${ids.u1}` })).status, 400);
    assert.deepEqual(fail(await join('u1', code)), [400, 400, '你已在会议中']);
    assert.deepEqual(
      fail(await call('POST', `/meeting/rooms/${code}/leave`, { as: 'u5', body: {} })),
      [400, 400, '你当前未在会议中'],
    );
    await endAll();
  });

  it('transfer-host swaps the roles; kick removes the member, who may join elsewhere', async () => {
    const { code } = await create('host');
    await join('u1', code);
    await join('u2', code);
    const moved = await call('POST', `/meeting/rooms/${code}/transfer-host`, {
      as: 'host',
      body: { target_user_id: ids.u1 },
    });
    assert.deepEqual(moved.body.data, { old_host_id: ids.host, new_host_id: ids.u1 });
    const detail = await call('GET', `/meeting/rooms/${code}`, { as: 'u2' });
    const roles = Object.fromEntries(
      detail.body.data.participants.map((p: { user_id: number; role: number }) => [
        p.user_id,
        p.role,
      ]),
    );
    assert.deepEqual(roles, { [ids.host!]: 0, [ids.u1!]: 1, [ids.u2!]: 0 });
    assert.equal(detail.body.data.room.host_id, ids.u1);
    const kicked = await call('POST', `/meeting/rooms/${code}/kick`, {
      as: 'u1',
      body: { user_id: ids.u2 },
    });
    assert.equal(kicked.status, 200, JSON.stringify(kicked.body));
    assert.equal(kicked.body.data.user_id, ids.u2);
    assert.deepEqual(fail(await call('GET', `/meeting/rooms/${code}`, { as: 'u2' })), [
      400,
      400,
      '你当前未在会议中',
    ]);
    const elsewhere = await create('u2');
    assert.match(elsewhere.code, CODE, 'kicked: no longer active anywhere');
    open.splice(0, open.length, { code, host: 'u1' }, { code: elsewhere.code, host: 'u2' });
    await call('POST', `/meeting/rooms/${code}/end`, { as: 'u1', body: {} });
    await call('POST', `/meeting/rooms/${elsewhere.code}/end`, { as: 'u2', body: {} });
    open.splice(0);
  });

  it('单点参会: 你当前已在其他会议中 for create and join while active elsewhere', async () => {
    const a = await create('host');
    const b = await create('u1');
    assert.deepEqual(
      fail(await call('POST', '/meeting/rooms', { as: 'host', body: { title: 'x' } })),
      [400, 400, '你当前已在其他会议中'],
    );
    assert.deepEqual(fail(await join('host', b.code)), [400, 400, '你当前已在其他会议中']);
    assert.equal((await join('u2', a.code)).status, 200);
    assert.deepEqual(fail(await join('u2', b.code)), [400, 400, '你当前已在其他会议中']);
    await endAll();
  });

  it('the join check order: 存在 → 未结束 → 单点参会 → 密码锁定 → 密码校验 → 容量', async () => {
    // A full, password-protected meeting; u3 is active elsewhere and gives a wrong password.
    const full = await create('host', { password: 'right-pw', max_members: 2 });
    assert.equal(full.data.room.has_password, true);
    assert.equal((await join('u1', full.code, { password: 'right-pw' })).status, 200);
    const other = await create('u2');
    assert.equal((await join('u3', other.code)).status, 200);
    // 单点参会 before 密码: u3 (elsewhere, wrong password) hears about the other meeting, and
    // it did not count as a wrong attempt.
    assert.deepEqual(fail(await join('u3', full.code, { password: 'wrong' })), [
      400,
      400,
      '你当前已在其他会议中',
    ]);
    await call('POST', `/meeting/rooms/${other.code}/leave`, { as: 'u3', body: {} });
    // 需要密码 / 密码错误 before 容量 (the meeting is full).
    assert.deepEqual(fail(await join('u3', full.code)), [400, 400, '会议需要密码']);
    assert.deepEqual(fail(await join('u3', full.code, { password: 'wrong' })), [
      400,
      400,
      '会议密码错误',
    ]);
    assert.deepEqual(fail(await join('u3', full.code, { password: 'right-pw' })), [
      400,
      400,
      '会议已满员',
    ]);
    // 未结束 before 单点参会: an ended meeting says so even to someone active elsewhere.
    const ending = await create('u4');
    await call('POST', `/meeting/rooms/${ending.code}/end`, { as: 'u4', body: {} });
    assert.equal((await join('u4', other.code)).status, 200);
    assert.deepEqual(fail(await join('u4', ending.code)), [400, 400, '会议已结束']);
    open.splice(
      open.findIndex((o) => o.code === ending.code),
      1,
    );
    await endAll();
  });

  it('password lockout: 5 × 会议密码错误, then 密码尝试过多，请稍后再试 even when right', async () => {
    const { code } = await create('host', { password: 'open-sesame' });
    for (let i = 1; i <= 5; i++) {
      assert.deepEqual(
        fail(await join('u5', code, { password: `wrong-${i}` })),
        [400, 400, '会议密码错误'],
        `attempt ${i}`,
      );
    }
    for (const password of ['wrong-6', 'open-sesame']) {
      assert.deepEqual(
        fail(await join('u5', code, { password })),
        [400, 400, '密码尝试过多，请稍后再试'],
        password,
      );
    }
    // The lock is per (user, code): another user with the right password gets in.
    assert.equal((await join('u6', code, { password: 'open-sesame' })).status, 200);
    // When the lock expires (its key is gone), the right password works again.
    await app.kv.del(`meeting:pwd:default:${code}:${ids.u5}`);
    assert.equal((await join('u5', code, { password: 'open-sesame' })).status, 200);
    await endAll();
  });

  it('a retried create or join (same request_id or Idempotency-Key) answers the first outcome', async () => {
    const body = { title: '重试', request_id: 'create-once-1' };
    const first = await call('POST', '/meeting/rooms', { as: 'u7', body });
    const second = await call('POST', '/meeting/rooms', { as: 'u7', body });
    assert.equal(first.status, 201);
    assert.equal(second.status, 201, JSON.stringify(second.body));
    assert.deepEqual(second.body.data, first.body.data);
    open.push({ code: first.body.data.room.room_code, host: 'u7' });
    const mine = await call('GET', '/meeting/rooms/mine', { as: 'u7' });
    assert.equal(mine.body.data.list.length, 1, 'one meeting for one request id');
    // Another user's identical request id is theirs alone: it creates their own meeting.
    const theirs = await call('POST', '/meeting/rooms', { as: 'u8', body });
    assert.equal(theirs.status, 201);
    assert.notEqual(theirs.body.data.room.room_code, first.body.data.room.room_code);
    open.push({ code: theirs.body.data.room.room_code, host: 'u8' });

    const code = first.body.data.room.room_code as string;
    const headers = { 'idempotency-key': 'join-once-1' };
    const j1 = await call('POST', `/meeting/rooms/${code}/join`, { as: 'u9', body: {}, headers });
    const j2 = await call('POST', `/meeting/rooms/${code}/join`, { as: 'u9', body: {}, headers });
    assert.equal(j1.status, 200);
    assert.deepEqual(j2.body.data, j1.body.data, 'not 你已在会议中: the first outcome');
    // A refusal is final too: a retry after the cause went away still answers it.
    const pw = await create('u1', { password: 'pw-12345' });
    const wrong = { password: 'nope', request_id: 'join-wrong-1' };
    assert.deepEqual(fail(await join('u2', pw.code, wrong)), [400, 400, '会议密码错误']);
    assert.deepEqual(fail(await join('u2', pw.code, wrong)), [400, 400, '会议密码错误']);
    await endAll();
  });

  it('20 users race to join a meeting of 8: exactly 7 more get in, the rest 会议已满员', async () => {
    const { code } = await create('host', { max_members: 8 });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => join(`r${i}`, code)));
    const ok = results.filter((r) => r.status === 200).length;
    assert.equal(ok, 7, 'the host holds the 8th place');
    for (const r of results.filter((x) => x.status !== 200)) {
      assert.deepEqual(fail(r), [400, 400, '会议已满员']);
    }
    const detail = await call('GET', `/meeting/rooms/${code}`, { as: 'host' });
    assert.equal(detail.body.data.online_count, 8);
    await endAll();
  });

  it('one user racing to join two meetings gets into exactly one', async () => {
    const a = await create('u1');
    const b = await create('u2');
    const [x, y] = await Promise.all([join('u3', a.code), join('u3', b.code)]);
    assert.deepEqual([x, y].map((r) => r.status).sort(), [200, 400]);
    const loser = x.status === 200 ? y : x;
    assert.equal(loser.body.message, '你当前已在其他会议中');
    await endAll();
  });

  it('the host leaving hands the host role to the earliest-joined member', async () => {
    const { code } = await create('host');
    await join('u1', code);
    await join('u2', code);
    await call('POST', `/meeting/rooms/${code}/leave`, { as: 'host', body: {} });
    const detail = await call('GET', `/meeting/rooms/${code}`, { as: 'u2' });
    assert.equal(detail.body.data.room.host_id, ids.u1);
    open.splice(0, open.length, { code, host: 'u1' });
    await call('POST', `/meeting/rooms/${code}/end`, { as: 'u1', body: {} });
    open.splice(0);
  });

  it('the host leaving while a transfer is in flight: exactly one host', async () => {
    const { code } = await create('host');
    await join('u1', code);
    await join('u2', code);
    const [left, moved] = await Promise.all([
      call('POST', `/meeting/rooms/${code}/leave`, { as: 'host', body: {} }),
      call('POST', `/meeting/rooms/${code}/transfer-host`, {
        as: 'host',
        body: { target_user_id: ids.u2 },
      }),
    ]);
    assert.equal(left.status, 200);
    const detail = await call('GET', `/meeting/rooms/${code}`, { as: 'u1' });
    const hosts = detail.body.data.participants.filter((p: { role: number }) => p.role === 1);
    assert.equal(hosts.length, 1, JSON.stringify(detail.body.data.participants));
    assert.equal(hosts[0].user_id, detail.body.data.room.host_id);
    assert.notEqual(detail.body.data.room.host_id, ids.host);
    // The transfer either came first (u2) or found the host gone (仅主持人可操作 / 不在会议中).
    if (moved.status !== 200) assert.ok([400, 403].includes(moved.status));
    const host = Object.entries(ids).find(([, id]) => id === detail.body.data.room.host_id)![0];
    await call('POST', `/meeting/rooms/${code}/end`, { as: host, body: {} });
    open.splice(0);
  });
});

describe('meetings REST: room code collisions', () => {
  it('会议号冲突，请重试 after 5 collisions, and nothing is created', async () => {
    let draws = 0;
    const app = await startTestHttpApp(
      {},
      {
        wrapMeetingStore: (store) => ({
          ...store,
          claimMeetingCode: () => {
            draws++;
            return Promise.resolve({ kind: 'taken' });
          },
        }),
      },
    );
    try {
      const c = meetingClient(() => app.http);
      await c.users(['solo']);
      const r = await c.call('POST', '/meeting/rooms', { as: 'solo', body: { title: 't' } });
      assert.deepEqual([r.status, r.body.code, r.body.message], [400, 400, '会议号冲突，请重试']);
      assert.equal(draws, 5);
      const mine = await c.call('GET', '/meeting/rooms/mine', { as: 'solo' });
      assert.deepEqual(mine.body.data.list, []);
    } finally {
      await app.close();
    }
  });
});
