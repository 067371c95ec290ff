/**
 * ListMembers from outside, on a real node (embedded SQLite): paging through a room over
 * REST returns every present member once, in order, and ends with `next_after: null`;
 * members who left are gone; a `limit` or `after` that is not what it says is a 400 (a
 * `limit` past 200 is cut to 200); an unknown room is 404; gRPC answers the same pages.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../main/config.js';
import { startNode, type RoomsNode } from '../../main/node.js';
import { silentLogger } from '../../cell/testing/harness.js';
import { GrpcForwarder } from '../../edge/grpc/room-service.js';

const GRPC_TOKEN = 'member-pages-grpc-token-0123456789abcdef';

interface Member {
  user_id: number;
  joined_at_ms: number;
  last_seen_at_ms: number;
}
interface Page {
  app_code: string;
  room_id: string;
  online_count: number;
  members: Member[];
  next_after: number | null;
}

/** 30 account ids of 1-4 digits, joined out of order: text order is not their order. */
const MEMBERS = Array.from({ length: 30 }, (_, i) => String(10 ** (i % 4) + i));
const numeric = (a: number, b: number) => a - b;

describe('ListMembers: a room of many members, a page at a time', () => {
  let dir: string;
  let node: RoomsNode;
  let token: string;
  let roomId: string;
  let bigRoomId: string;

  const get = async (url: string, as: string | null = token) => {
    const res = await node.http.inject({
      method: 'GET',
      url: `/api/v1/voice${url}`,
      headers: as ? { authorization: `Bearer ${as}` } : {},
    });
    return {
      status: res.statusCode,
      body: res.json<{ code: number; message: string; reason?: string; data: any }>(),
    };
  };
  const page = async (room: string, query: string): Promise<Page> => {
    const r = await get(`/rooms/${room}/members${query}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data as Page;
  };
  /** Every page of `room`, `limit` at a time, as a client pages: `after` = `next_after`. */
  const allPages = async (room: string, limit: number): Promise<Page[]> => {
    const pages: Page[] = [];
    let next: number | null = null;
    do {
      const p = await page(room, `?limit=${limit}${next === null ? '' : `&after=${next}`}`);
      pages.push(p);
      next = p.next_after;
      assert.ok(pages.length <= 100, 'the pages end');
    } while (next !== null);
    return pages;
  };
  const joinRoom = (room: string, userId: string) =>
    node.voice.api.call('JoinRoom', { room_id: room, user_id: userId, request_id: `j-${userId}` });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-members-'));
    node = await startNode(
      loadConfig({
        ROOMS_DB_URL: join(dir, 'rooms.sqlite'),
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: '0',
        ROOMS_GRPC_HOST: '127.0.0.1',
        ROOMS_GRPC_PORT: '0',
        ROOMS_GRPC_TOKEN: GRPC_TOKEN,
        ROOMS_BCRYPT_COST: '4',
        ROOMS_LOG_LEVEL: 'silent',
        ROOMS_MEDIA_EMBEDDED: 'false',
        ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
      }),
      silentLogger,
    );
    const creds = { username: 'pager', password: 'secret123' };
    await node.http.inject({ method: 'POST', url: '/api/v1/auth/register', payload: creds });
    const login = await node.http.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: creds,
    });
    token = login.json().data.access_token;
    const create = async (title: string) => {
      const res = await node.http.inject({
        method: 'POST',
        url: '/api/v1/voice/rooms',
        headers: { authorization: `Bearer ${token}` },
        payload: { title },
      });
      return res.json().data.room_id as string;
    };
    roomId = await create('Thirty');
    // The members join over the API (they need no accounts): at once, as a crowd does.
    await Promise.all(MEMBERS.map((id) => joinRoom(roomId, id)));
    bigRoomId = await create('More than a page');
    await Promise.all(Array.from({ length: 230 }, (_, i) => joinRoom(bigRoomId, String(5000 + i))));
  });
  after(async () => {
    await node?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('pages through 30 members 7 at a time: each once, in numeric order, then null', async () => {
    const pages = await allPages(roomId, 7);
    assert.deepEqual(
      pages.map((p) => p.members.length),
      [7, 7, 7, 7, 2],
    );
    const listed = pages.flatMap((p) => p.members.map((m) => m.user_id));
    assert.deepEqual(listed, MEMBERS.map(Number).sort(numeric));
    for (const p of pages) {
      assert.equal(p.online_count, 30);
      assert.deepEqual([p.app_code, p.room_id], ['default', roomId]);
      assert.equal(p.next_after, p === pages.at(-1) ? null : p.members.at(-1)!.user_id);
    }
    // The same members, times and order as the whole room's list.
    const room = (await get(`/rooms/${roomId}`)).body.data;
    assert.deepEqual(
      pages.flatMap((p) => p.members),
      room.members,
    );
    // No `limit`: 50 at most, so one page holds all 30.
    const first = await page(roomId, '');
    assert.deepEqual([first.members.length, first.next_after], [30, null]);
  });

  it('lists no member who left, and a page may start after one who did', async () => {
    const leavers = ['9', '11', '102'];
    for (const id of leavers) {
      await node.voice.api.call('LeaveRoom', {
        room_id: roomId,
        user_id: id,
        request_id: `l-${id}`,
      });
    }
    const listed = (await allPages(roomId, 7)).flatMap((p) => p.members.map((m) => m.user_id));
    const present = MEMBERS.filter((id) => !leavers.includes(id))
      .map(Number)
      .sort(numeric);
    assert.deepEqual(listed, present);
    const afterLeaver = await page(roomId, '?after=11&limit=2');
    assert.deepEqual(
      afterLeaver.members.map((m) => m.user_id),
      present.filter((id) => id > 11).slice(0, 2),
    );
    assert.equal(afterLeaver.online_count, 27);
    // Past every member: an empty last page.
    const beyond = await page(roomId, '?after=999999999999999');
    assert.deepEqual([beyond.members, beyond.next_after], [[], null]);
  });

  it('refuses a limit or after that is not what it says with 400, changing nothing', async () => {
    const version = (await get(`/rooms/${roomId}`)).body.data.room_version;
    const refused: [string, RegExp][] = [
      ['limit=0', /^limit: at least 1/],
      ['limit=abc', /^limit: not a decimal integer/],
      ['limit=1e3', /^limit: not a decimal integer/],
      ['limit=-1', /^limit: not a decimal integer/],
      ['limit=', /^limit: not a decimal integer/],
      ['limit=%205', /^limit: not a decimal integer/],
      ['limit=0x10', /^limit: not a decimal integer/],
      ['limit=7.0', /^limit: not a decimal integer/],
      ['limit=1&limit=2', /^limit: give it once/],
      ['after=abc', /^after: a user id/],
      ['after=1.5', /^after: a user id/],
      ['after=', /^after: a user id/],
      ['after=0', /^after: a user id/],
      ['after=-3', /^after: a user id/],
      ['after=017', /^after: a user id/],
      ['after=1234567890123456', /^after: a user id/], // 16 digits
      ['after=%2217%22', /^after: a user id/], // "17"
      ['after=1&after=2', /^after: give it once/],
    ];
    for (const [query, message] of refused) {
      const r = await get(`/rooms/${roomId}/members?${query}`);
      assert.equal(r.status, 400, `${query}: ${JSON.stringify(r.body)}`);
      assert.deepEqual([r.body.code, r.body.reason], [400, 'INVALID_ARGUMENT'], query);
      assert.match(r.body.message, message, query);
    }
    assert.equal((await get(`/rooms/${roomId}`)).body.data.room_version, version);
  });

  it('cuts a limit past 200 to 200, however many digits it has', async () => {
    for (const limit of ['201', '1000', '99999999999999999999']) {
      const p = await page(bigRoomId, `?limit=${limit}`);
      assert.equal(p.members.length, 200, limit);
      assert.equal(p.next_after, 5199, limit);
      assert.equal(p.online_count, 230);
    }
    const rest = await page(bigRoomId, '?limit=500&after=5199');
    assert.deepEqual(
      [rest.members.length, rest.members[0]!.user_id, rest.next_after],
      [30, 5200, null],
    );
    assert.equal((await page(bigRoomId, '?limit=200')).members.length, 200);
    assert.equal((await page(bigRoomId, '?limit=1')).next_after, 5000);
  });

  it('answers an unknown room 404 ROOM_NOT_FOUND, and nobody without a token', async () => {
    const unknown = await get('/rooms/no_such_room/members?limit=5');
    assert.deepEqual([unknown.status, unknown.body.reason], [404, 'ROOM_NOT_FOUND']);
    const anonymous = await get(`/rooms/${roomId}/members`, null);
    assert.equal(anonymous.status, 401);
  });

  it('answers the same pages over gRPC, user ids in decimal and "" for no next page', async () => {
    const client = new GrpcForwarder({ token: GRPC_TOKEN, tls: null, markForwarded: false });
    const addr = `127.0.0.1:${node.voice.grpcPort}`;
    try {
      const viaRest = await allPages(roomId, 7);
      let after = '';
      for (const rest of viaRest) {
        const viaGrpc = await client.call(addr, 'ListMembers', {
          room_id: roomId,
          after,
          limit: 7,
        });
        assert.deepEqual(viaGrpc, {
          ...rest,
          members: rest.members.map((m) => ({ ...m, user_id: String(m.user_id) })),
          next_after: rest.next_after === null ? '' : String(rest.next_after),
        });
        after = String(rest.next_after ?? '');
      }
      // An unset limit (proto3's 0) is the default, 50.
      const whole = (await client.call(addr, 'ListMembers', { room_id: bigRoomId })) as Page;
      assert.equal(whole.members.length, 50);
      await assert.rejects(client.call(addr, 'ListMembers', { room_id: roomId, after: 'abc' }), {
        code: 'INVALID_ARGUMENT',
      });
      await assert.rejects(client.call(addr, 'ListMembers', { room_id: roomId, limit: -1 }), {
        code: 'INVALID_ARGUMENT',
      });
      await assert.rejects(client.call(addr, 'ListMembers', { room_id: 'no_such_room' }), {
        code: 'ROOM_NOT_FOUND',
      });
    } finally {
      client.close();
    }
  });
});
