/**
 * The voice-room REST, admin and TRTC callback edges on a real node (embedded SQLite),
 * through Fastify's inject.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { loadConfig } from '../../main/config.js';
import { startNode, type RoomsNode } from '../../main/node.js';
import { eventually, silentLogger } from '../../cell/testing/harness.js';

const ADMIN = 'admin-token-for-tests-0123';
const TRTC_KEY = 'trtc-callback-key';
const SDK_APP_ID = '1400000001';

describe('voice-room REST, admin and TRTC callbacks', () => {
  let dir: string;
  let node: RoomsNode;
  const tokens: Record<string, string> = {};
  /** Account ids, as JSON carries them: numbers. */
  const ids: Record<string, number> = {};

  const call = async (
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    opts: { as?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const res = await node.http.inject({
      method,
      url: `/api/v1${url}`,
      headers: {
        ...(opts.as ? { authorization: `Bearer ${tokens[opts.as]}` } : {}),
        ...opts.headers,
      },
      ...(opts.body !== undefined ? { payload: opts.body as object } : {}),
    });
    return {
      status: res.statusCode,
      body: res.json<{ code: number; data: any; reason?: string }>(),
    };
  };
  const ok = async (...args: Parameters<typeof call>) => {
    const r = await call(...args);
    assert.equal(r.body.code, 0, `${args[1]}: ${JSON.stringify(r.body)}`);
    return r.body.data;
  };
  const trtc = (event: unknown, key = TRTC_KEY, sdk = SDK_APP_ID) => {
    const raw = JSON.stringify(event);
    return node.http.inject({
      method: 'POST',
      url: '/api/v1/rtc/trtc/callback',
      headers: {
        'content-type': 'application/json',
        sdkappid: sdk,
        sign: createHmac('sha256', key).update(raw).digest('base64'),
      },
      payload: raw,
    });
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-voice-'));
    const config = loadConfig({
      ROOMS_DB_URL: join(dir, 'rooms.sqlite'),
      ROOMS_HTTP_HOST: '127.0.0.1',
      ROOMS_HTTP_PORT: '0',
      ROOMS_GRPC_HOST: '127.0.0.1',
      ROOMS_GRPC_PORT: '0',
      ROOMS_ADMIN_TOKEN: ADMIN,
      ROOMS_TRTC_APPS: `${SDK_APP_ID}:default:${TRTC_KEY}`,
      ROOMS_BCRYPT_COST: '4',
      ROOMS_LOG_LEVEL: 'silent',
      ROOMS_MEDIA_EMBEDDED: 'false', // media has its own tests
      ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
    });
    node = await startNode(config, silentLogger);
    for (const name of ['alice', 'bob', 'carol']) {
      const user = await ok('POST', '/auth/register', {
        body: { username: name, password: 'secret123' },
      });
      ids[name] = Number(user.id ?? user.user?.id);
      const login = await ok('POST', '/auth/login', {
        body: { username: name, password: 'secret123' },
      });
      tokens[name] = login.access_token;
    }
  });
  after(async () => {
    await node?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const newRoom = async (requestId: string) => {
    const created = await call('POST', '/voice/rooms', {
      as: 'alice',
      body: { title: 'Evening chat', seat_count: 4, request_id: requestId },
    });
    assert.equal(created.status, 201);
    return created.body.data.room_id as string;
  };

  it('runs a room from creation to close, with retries, moderation and the lobby', async () => {
    const roomId = await newRoom('create-1');
    const retry = await ok('POST', '/voice/rooms', {
      as: 'alice',
      body: { title: 'Evening chat', seat_count: 4, request_id: 'create-1' },
    });
    assert.deepEqual(retry, { room_id: roomId, room_version: 1, duplicate: true });

    await ok('POST', `/voice/rooms/${roomId}/join`, { as: 'alice' });
    await ok('POST', `/voice/rooms/${roomId}/join`, { as: 'bob' });
    const lobby = await ok('GET', '/voice/rooms', { as: 'carol' });
    assert.deepEqual(
      lobby.list.find((r: { room_id: string }) => r.room_id === roomId),
      {
        room_id: roomId,
        title: 'Evening chat',
        owner_user_id: ids.alice,
        online_count: 2,
        mic_count: 0,
        created_at_ms: lobby.list[0].created_at_ms,
      },
    );

    const up = await ok('POST', `/voice/rooms/${roomId}/mic/up`, {
      as: 'bob',
      body: { seat_index: 2 },
    });
    assert.equal(up.state, 'pending_publish');
    const wrong = await call('POST', `/voice/rooms/${roomId}/mic/confirm`, {
      as: 'bob',
      body: { mic_session_id: 'ms-0' },
    });
    assert.deepEqual([wrong.status, wrong.body.reason], [400, 'MIC_SESSION_MISMATCH']);
    const confirmed = await ok('POST', `/voice/rooms/${roomId}/mic/confirm`, {
      as: 'bob',
      body: { mic_session_id: up.mic_session_id },
    });
    assert.equal(confirmed.state, 'publishing');

    const notAdmin = await call('POST', `/voice/rooms/${roomId}/kick`, {
      as: 'bob',
      body: { user_id: ids.alice },
    });
    assert.deepEqual([notAdmin.status, notAdmin.body.reason], [403, 'NOT_ADMIN']);
    await ok('POST', `/voice/rooms/${roomId}/kick`, { as: 'alice', body: { user_id: ids.bob } });
    const banned = await call('POST', `/voice/rooms/${roomId}/join`, { as: 'bob' });
    assert.deepEqual([banned.status, banned.body.reason], [403, 'USER_BANNED']);
    const room = await ok('GET', `/voice/rooms/${roomId}`, { as: 'alice' });
    assert.deepEqual(room.banned, [ids.bob]);
    assert.equal(room.seats[2].user_id, null, 'kick frees the seat');
    await ok('POST', `/voice/rooms/${roomId}/unban`, { as: 'alice', body: { user_id: ids.bob } });
    await ok('POST', `/voice/rooms/${roomId}/join`, { as: 'bob' });

    await ok('POST', `/voice/rooms/${roomId}/close`, { as: 'alice' });
    const closed = await call('POST', `/voice/rooms/${roomId}/join`, { as: 'carol' });
    assert.deepEqual([closed.status, closed.body.reason], [400, 'ROOM_CLOSED']);
    const after = await ok('GET', '/voice/rooms', { as: 'carol' });
    assert.ok(!after.list.some((r: { room_id: string }) => r.room_id === roomId));
  });

  it('refuses bad input and missing tokens without changing anything', async () => {
    const roomId = await newRoom('create-2');
    const before = await ok('GET', `/voice/rooms/${roomId}`, { as: 'alice' });
    const cases = [
      await call('POST', `/voice/rooms/${roomId}/mic/up`, {
        as: 'alice',
        body: { seat_index: -1 },
      }),
      await call('POST', `/voice/rooms/${roomId}/mic/up`, {
        as: 'alice',
        body: { seat_index: 'x' },
      }),
      await call('POST', '/voice/rooms', { as: 'alice', body: { title: '', seat_count: 4 } }),
      await call('POST', `/voice/rooms/${roomId}/kick`, {
        as: 'alice',
        body: { user_id: 'bad id!' },
      }),
      // A user id is a JSON number: its decimal text is refused, too.
      await call('POST', `/voice/rooms/${roomId}/kick`, {
        as: 'alice',
        body: { user_id: String(ids.bob) },
      }),
    ];
    for (const c of cases) assert.deepEqual([c.status, c.body.reason], [400, 'INVALID_ARGUMENT']);
    const anonymous = await call('POST', `/voice/rooms/${roomId}/join`);
    assert.equal(anonymous.status, 401);
    const unknown = await call('GET', '/voice/rooms/no-such-room', { as: 'alice' });
    assert.deepEqual([unknown.status, unknown.body.reason], [404, 'ROOM_NOT_FOUND']);
    const afterAll = await ok('GET', `/voice/rooms/${roomId}`, { as: 'alice' });
    assert.equal(afterAll.room_version, before.room_version);
  });

  it('charges a gift once per request id and never overdraws', async () => {
    const roomId = await newRoom('create-3');
    await ok('POST', `/voice/rooms/${roomId}/join`, { as: 'alice' });
    await ok('POST', `/voice/rooms/${roomId}/join`, { as: 'bob' });
    const admin = { 'x-admin-token': ADMIN };
    const noToken = await call('PUT', '/admin/gifts/rose', { body: { name: 'Rose', price: 10 } });
    assert.equal(noToken.status, 401);
    await ok('PUT', '/admin/gifts/rose', { headers: admin, body: { name: 'Rose', price: 10 } });
    const topped = await ok('POST', '/admin/wallets/topup', {
      headers: admin,
      body: { user_id: ids.alice, amount: 100, request_id: 'topup-1' },
    });
    assert.equal(topped.balance, 100);
    const again = await ok('POST', '/admin/wallets/topup', {
      headers: admin,
      body: { user_id: ids.alice, amount: 100, request_id: 'topup-1' },
    });
    assert.deepEqual([again.balance, again.duplicate], [100, true]);

    const gift = { receiver_user_ids: [ids.bob], gift_id: 'rose', count: 3, request_id: 'gift-1' };
    const first = await ok('POST', `/voice/rooms/${roomId}/gifts`, { as: 'alice', body: gift });
    assert.deepEqual([first.total_price, first.balance, first.duplicate], [30, 70, false]);
    const retried = await ok('POST', `/voice/rooms/${roomId}/gifts`, { as: 'alice', body: gift });
    assert.deepEqual(
      [retried.room_version, retried.balance, retried.duplicate],
      [first.room_version, 70, true],
    );
    const tooMuch = await call('POST', `/voice/rooms/${roomId}/gifts`, {
      as: 'alice',
      body: { ...gift, count: 8, request_id: 'gift-2' },
    });
    assert.deepEqual([tooMuch.status, tooMuch.body.reason], [400, 'INSUFFICIENT_BALANCE']);
    const unknownGift = await call('POST', `/voice/rooms/${roomId}/gifts`, {
      as: 'alice',
      body: { ...gift, gift_id: 'tulip', request_id: 'gift-3' },
    });
    assert.deepEqual([unknownGift.status, unknownGift.body.reason], [404, 'GIFT_NOT_FOUND']);
    assert.equal((await ok('GET', '/voice/wallet', { as: 'alice' })).balance, 70);
    assert.equal((await ok('GET', '/voice/wallet', { as: 'bob' })).balance, 30);
  });

  it('answers a retried gift and a retried top-up with their first balance after it moved', async () => {
    const roomId = await newRoom('create-retry-balance');
    await ok('POST', `/voice/rooms/${roomId}/join`, { as: 'alice' });
    await ok('POST', `/voice/rooms/${roomId}/join`, { as: 'bob' });
    const admin = { 'x-admin-token': ADMIN };
    await ok('PUT', '/admin/gifts/lily', { headers: admin, body: { name: 'Lily', price: 5 } });
    const wallet = async () => (await ok('GET', '/voice/wallet', { as: 'bob' })).balance as number;
    const start = await wallet();
    const topUp = { user_id: ids.bob, amount: 40, request_id: 'topup-retry-1' };
    const topped = await ok('POST', '/admin/wallets/topup', { headers: admin, body: topUp });
    assert.equal(topped.balance, start + 40);
    const gift = {
      receiver_user_ids: [ids.alice],
      gift_id: 'lily',
      count: 2,
      request_id: 'gift-retry-1',
    };
    const first = await ok('POST', `/voice/rooms/${roomId}/gifts`, { as: 'bob', body: gift });
    assert.equal(first.balance, start + 30);
    // The wallet moves on before the retries arrive.
    await ok('POST', '/admin/wallets/topup', {
      headers: admin,
      body: { user_id: ids.bob, amount: 7, request_id: 'topup-retry-2' },
    });
    assert.equal(await wallet(), start + 37);
    const giftAgain = await ok('POST', `/voice/rooms/${roomId}/gifts`, { as: 'bob', body: gift });
    assert.deepEqual(giftAgain, { ...first, duplicate: true });
    const topUpAgain = await ok('POST', '/admin/wallets/topup', { headers: admin, body: topUp });
    assert.deepEqual(topUpAgain, { ...topped, duplicate: true });
    assert.equal(await wallet(), start + 37);
  });

  it('applies signed TRTC callbacks once, in event-time order, and refuses bad ones', async () => {
    const roomId = await newRoom('create-4');
    await ok('POST', `/voice/rooms/${roomId}/join`, { as: 'bob' });
    const up = await ok('POST', `/voice/rooms/${roomId}/mic/up`, {
      as: 'bob',
      body: { seat_index: 1 },
    });
    const seat = async () => (await ok('GET', `/voice/rooms/${roomId}`, { as: 'bob' })).seats[1];
    const event = (type: number, ms: number, unique: string) => ({
      EventGroupId: type === 104 ? 1 : 2,
      EventType: type,
      CallbackTs: ms,
      // TRTC names its users in text: the account id in decimal.
      EventInfo: { RoomId: roomId, UserId: String(ids.bob), EventMsTs: ms, UniqueId: unique },
    });
    const now = Date.now();

    const forged = await trtc(event(203, now + 10, 'u1'), 'wrong-key');
    assert.equal(forged.statusCode, 401);
    assert.equal((await trtc(event(203, now + 10, 'u1'), TRTC_KEY, '999')).statusCode, 401);
    assert.equal((await seat()).state, 'pending_publish', 'nothing applied');
    // No time of the RTC clock: refused, never stamped with this server's clock.
    const { EventMsTs: _dropped, ...untimed } = event(203, now + 10, 'u0').EventInfo;
    const noTime = await trtc({ ...event(203, now + 10, 'u0'), EventInfo: untimed });
    assert.equal(noTime.statusCode, 400);
    assert.equal((await seat()).state, 'pending_publish', 'nothing applied');
    const malformed = await node.http.inject({
      method: 'POST',
      url: '/api/v1/rtc/trtc/callback',
      headers: {
        'content-type': 'application/json',
        sdkappid: SDK_APP_ID,
        sign: createHmac('sha256', TRTC_KEY).update('{"EventType":').digest('base64'),
      },
      payload: '{"EventType":',
    });
    assert.equal(malformed.statusCode, 400);

    const started = await trtc(event(203, now + 10, 'u1'));
    assert.deepEqual([started.statusCode, started.json()], [200, { code: 0 }]);
    assert.equal((await seat()).state, 'publishing');
    // A stop that happened before the start is stale: a no-op, still acknowledged.
    const stale = await trtc(event(204, now + 5, 'u2'));
    assert.deepEqual(stale.json(), { code: 0 });
    assert.equal((await seat()).state, 'publishing');
    // The exit frees the seat but keeps the presence; its retry changes nothing more.
    await trtc(event(104, now + 20, 'u3'));
    const room = await ok('GET', `/voice/rooms/${roomId}`, { as: 'bob' });
    assert.equal(room.seats[1].user_id, null);
    assert.ok(room.members.some((m: { user_id: number }) => m.user_id === ids.bob));
    const versionAfterExit = room.room_version;
    await ok('POST', `/voice/rooms/${roomId}/mic/up`, { as: 'bob', body: { seat_index: 1 } });
    assert.deepEqual((await trtc(event(104, now + 20, 'u3'))).json(), { code: 0 });
    const later = await ok('GET', `/voice/rooms/${roomId}`, { as: 'bob' });
    assert.equal(later.room_version, versionAfterExit + 1, 'the retried exit applied nothing');
    assert.notEqual(later.seats[1].mic_session_id, up.mic_session_id);
    assert.equal(later.seats[1].user_id, ids.bob, 'an old exit never frees the new session');
  });

  it("pushes the room's events live to present members, and the kick to the kicked user", async () => {
    const roomId = await newRoom('create-ws');
    await ok('POST', `/voice/rooms/${roomId}/join`, { as: 'alice' });
    await ok('POST', `/voice/rooms/${roomId}/join`, { as: 'bob' });
    const url = node.httpAddress.replace(/^http/, 'ws');
    const open = async (who: string) => {
      const socket = new WebSocket(`${url}/ws?token=${tokens[who]}`);
      const frames: any[] = [];
      socket.on('message', (raw: Buffer) => frames.push(JSON.parse(raw.toString('utf8'))));
      await once(socket, 'open');
      socket.send(JSON.stringify({ event: 'room.subscribe', seq: 1, data: { room_id: roomId } }));
      return { socket, frames };
    };
    const outsider = await open('carol'); // not in the room: refused
    const [alice, bob] = [await open('alice'), await open('bob')];
    const acked = (c: { frames: any[] }) => c.frames.find((f) => f.event === 'room.subscribe.ack');
    await eventually(() => acked(alice) && acked(bob) && acked(outsider));
    assert.deepEqual(
      [acked(alice).code, acked(outsider).code, acked(outsider).reason],
      [0, -1, 'NOT_IN_ROOM_WS'],
    );

    await ok('POST', `/voice/rooms/${roomId}/join`, { as: 'carol' });
    await ok('POST', `/voice/rooms/${roomId}/mic/up`, { as: 'carol', body: { seat_index: 0 } });
    await ok('POST', `/voice/rooms/${roomId}/kick`, { as: 'alice', body: { user_id: ids.bob } });
    const names = (c: { frames: any[] }) =>
      c.frames.filter((f) => f.event.startsWith('voice.')).map((f) => f.event);
    await eventually(() => names(alice).length >= 3 && names(bob).includes('voice.kicked'));
    assert.deepEqual(names(alice).slice(0, 3), [
      'voice.member.joined',
      'voice.mic.up',
      'voice.member.kicked',
    ]);
    const joined = alice.frames.find((f) => f.event === 'voice.member.joined');
    assert.equal(joined.data.user_id, ids.carol);
    assert.equal(typeof joined.data.room_version, 'number');
    const kicked = bob.frames.find((f) => f.event === 'voice.kicked');
    assert.equal(kicked.data.room_id, roomId);
    assert.equal(kicked.data.operator_user_id, ids.alice);
    for (const c of [alice, bob, outsider]) c.socket.close();
  });

  it('follows end with the presence: a member who left, and everyone once the room closed', async () => {
    const roomId = await newRoom('create-ws-follows');
    for (const who of ['alice', 'bob', 'carol']) {
      await ok('POST', `/voice/rooms/${roomId}/join`, { as: who });
    }
    const url = node.httpAddress.replace(/^http/, 'ws');
    const open = async (who: string) => {
      const socket = new WebSocket(`${url}/ws?token=${tokens[who]}`);
      const frames: any[] = [];
      socket.on('message', (raw: Buffer) => frames.push(JSON.parse(raw.toString('utf8'))));
      await once(socket, 'open');
      socket.send(JSON.stringify({ event: 'room.subscribe', seq: 1, data: { room_id: roomId } }));
      await eventually(() => frames.some((f) => f.event === 'room.subscribe.ack' && f.code === 0));
      return { socket, frames };
    };
    const [alice, bob, carol] = [await open('alice'), await open('bob'), await open('carol')];
    const followed = async () => {
      const text = (await node.http.inject({ method: 'GET', url: '/metrics' })).body;
      return Number(/^rooms_ws_followed_rooms (\d+)/m.exec(text)?.[1]);
    };
    const followedBefore = await followed();
    await ok('POST', `/voice/rooms/${roomId}/leave`, { as: 'bob' });
    await eventually(() => bob.frames.some((f) => f.event === 'voice.left'));
    await ok('POST', `/voice/rooms/${roomId}/mic/up`, { as: 'carol', body: { seat_index: 1 } });
    await eventually(() => alice.frames.some((f) => f.event === 'voice.mic.up'));
    await ok('POST', `/voice/rooms/${roomId}/close`, { as: 'alice' });
    await eventually(() =>
      [alice, carol].every((c) => c.frames.some((f) => f.event === 'voice.room.closed')),
    );
    const seen = (c: { frames: any[] }) =>
      c.frames.filter((f) => f.event.startsWith('voice.') && f.data.room_id === roomId);
    assert.ok(!seen(bob).some((f) => f.event === 'voice.mic.up'), 'bob left before the mic up');
    assert.ok(!seen(bob).some((f) => f.event === 'voice.room.closed'));
    // Nobody follows the closed room any more on this node.
    await eventually(async () => (await followed()) === followedBefore - 1);
    for (const c of [alice, bob, carol]) c.socket.close();
  });
});
