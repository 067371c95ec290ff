/**
 * Input is what it says it is, tried from outside over REST: a field of the wrong JSON type
 * or a missing required field is refused with 400 and changes nothing; every room id the
 * API accepts is reachable; amounts past 2^53 are refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';

const ADMIN = 'admin-token-for-input-tests';

interface Answer {
  status: number;
  body: { code: number; message: string; reason?: string; data: any };
}

describe('voice-room REST refuses input that is not what it says', () => {
  let app: TestHttpApp;
  const tokens: Record<string, string> = {};
  /** Account ids, as JSON carries them: numbers. */
  const ids: Record<string, number> = {};
  let roomId: string;

  const call = async (
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    opts: { as?: string; body?: unknown; admin?: boolean } = {},
  ): Promise<Answer> => {
    const res = await app.http.inject({
      method,
      url: `/api/v1${url}`,
      headers: {
        ...(opts.as ? { authorization: `Bearer ${tokens[opts.as]}` } : {}),
        ...(opts.admin ? { 'x-admin-token': ADMIN } : {}),
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(opts.body !== undefined ? { payload: JSON.stringify(opts.body) } : {}),
    });
    return { status: res.statusCode, body: res.json() };
  };
  const ok = async (...args: Parameters<typeof call>) => {
    const r = await call(...args);
    assert.equal(r.body.code, 0, `${args[1]}: ${JSON.stringify(r.body)}`);
    return r.body.data;
  };
  const room = () => ok('GET', `/voice/rooms/${roomId}`, { as: 'alice' });
  const assertRefused = (r: Answer, field: string) => {
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.code, 400);
    assert.match(r.body.message, new RegExp(field));
  };

  before(async () => {
    // The HTTP app alone: no port, gRPC server, relay or media server is started.
    app = await startTestHttpApp({ ROOMS_ADMIN_TOKEN: ADMIN });
    for (const name of ['alice', 'bob']) {
      const user = await ok('POST', '/auth/register', {
        body: { username: name, password: 'secret123' },
      });
      ids[name] = Number(user.id ?? user.user?.id);
      tokens[name] = (
        await ok('POST', '/auth/login', { body: { username: name, password: 'secret123' } })
      ).access_token;
    }
    roomId = (await ok('POST', '/voice/rooms', { as: 'alice', body: { title: 'Input' } })).room_id;
    for (const name of ['alice', 'bob']) {
      await ok('POST', `/voice/rooms/${roomId}/join`, { as: name });
    }
    await ok('PUT', '/admin/gifts/rose', { admin: true, body: { name: 'Rose', price: 1 } });
  });
  after(async () => {
    await app?.close();
  });

  it('seat_index must be a JSON integer: "1", "", true, [2], null and 1.5 change nothing', async () => {
    const before = await room();
    for (const seat_index of ['1', '', true, [2], null, 1.5, '0x1']) {
      for (const path of ['mic/up', 'mic/change', 'seats/lock']) {
        const r = await call('POST', `/voice/rooms/${roomId}/${path}`, {
          as: 'alice',
          body: { seat_index, locked: true },
        });
        assertRefused(r, 'seat_index');
      }
    }
    assert.deepEqual(await room(), before);
  });

  it('required fields are required: no default locks a seat or makes an admin', async () => {
    const before = await room();
    assertRefused(
      await call('POST', `/voice/rooms/${roomId}/seats/lock`, {
        as: 'alice',
        body: { seat_index: 1 },
      }),
      'locked',
    );
    assertRefused(
      await call('POST', `/voice/rooms/${roomId}/seats/lock`, {
        as: 'alice',
        body: { seat_index: 1, locked: 'true' },
      }),
      'locked',
    );
    assertRefused(
      await call('POST', `/voice/rooms/${roomId}/admins`, {
        as: 'alice',
        body: { user_id: ids.bob },
      }),
      'is_admin',
    );
    assertRefused(
      await call('POST', `/voice/rooms/${roomId}/admins`, {
        as: 'alice',
        body: { user_id: ids.bob, is_admin: 1 },
      }),
      'is_admin',
    );
    assert.deepEqual(await room(), before);
  });

  it('a gift count must be a JSON integer, and nothing is charged otherwise', async () => {
    await ok('POST', '/admin/wallets/topup', {
      admin: true,
      body: { user_id: ids.bob, amount: 50, request_id: 'input-topup' },
    });
    const before = await room();
    for (const count of ['2', true, [3], '0x10', null, 2.5]) {
      const r = await call('POST', `/voice/rooms/${roomId}/gifts`, {
        as: 'bob',
        body: { receiver_user_ids: [ids.alice], gift_id: 'rose', count },
      });
      assertRefused(r, 'count');
    }
    assert.deepEqual(await room(), before);
    assert.equal((await ok('GET', '/voice/wallet', { as: 'bob' })).balance, 50);
  });

  it('a user id is a JSON integer: "1002", "", true, [id], null, 1.5 and 0 change nothing', async () => {
    const before = await room();
    // Bob has coins (the gift test above), so only the id's type refuses his gift.
    const wallet = (await ok('GET', '/voice/wallet', { as: 'bob' })).balance;
    assert.ok(wallet > 0);
    for (const user_id of [String(ids.bob), '', true, [ids.bob], null, 1.5, 0, -1, 1e16]) {
      for (const path of ['kick', 'unban', 'mic/down']) {
        const r = await call('POST', `/voice/rooms/${roomId}/${path}`, {
          as: 'alice',
          body: { user_id },
        });
        assertRefused(r, 'user_id');
      }
      assertRefused(
        await call('POST', `/voice/rooms/${roomId}/admins`, {
          as: 'alice',
          body: { user_id, is_admin: true },
        }),
        'user_id',
      );
      assertRefused(
        await call('POST', `/voice/rooms/${roomId}/gifts`, {
          as: 'bob',
          body: { receiver_user_ids: [user_id], gift_id: 'rose', count: 1 },
        }),
        'receiver_user_ids',
      );
    }
    const asText = await call('POST', `/voice/rooms/${roomId}/kick`, {
      as: 'alice',
      body: { user_id: String(ids.bob) },
    });
    assert.equal(asText.body.message, 'user_id: a user id is a JSON integer (an account id)');
    assert.deepEqual(await room(), before);
    assert.equal((await ok('GET', '/voice/wallet', { as: 'bob' })).balance, wallet);
    // The admin top-up takes it as a number too.
    assertRefused(
      await call('POST', '/admin/wallets/topup', {
        admin: true,
        body: { user_id: String(ids.bob), amount: 5, request_id: 'input-user-id-text' },
      }),
      'user_id',
    );
    assert.equal((await ok('GET', '/voice/wallet', { as: 'bob' })).balance, wallet);
  });

  it('seat_count must be a JSON integer: "4" creates no room', async () => {
    const r = await call('POST', '/voice/rooms', {
      as: 'bob',
      body: { title: 'Typed', seat_count: '4', request_id: 'typed-room' },
    });
    assertRefused(r, 'seat_count');
    const lobby = await ok('GET', '/voice/rooms', { as: 'bob' });
    assert.ok(!lobby.list.some((x: { title: string }) => x.title === 'Typed'));
  });

  it("a request id is the caller's own: another user sending the same id gets an answer of its own", async () => {
    const shared = { request_id: 'same-id-for-everyone' };
    const alice = await call('POST', `/voice/rooms/${roomId}/mic/up`, {
      as: 'alice',
      body: { ...shared, seat_index: 2 },
    });
    assert.equal(alice.status, 200, JSON.stringify(alice.body));
    const bob = await call('POST', `/voice/rooms/${roomId}/mic/up`, {
      as: 'bob',
      body: { ...shared, seat_index: 3 },
    });
    assert.equal(bob.status, 200, JSON.stringify(bob.body));
    assert.equal(bob.body.data.duplicate, false, "bob's MicUp is decided for bob");
    const seats = (await room()).seats as { seat_index: number; user_id: number | null }[];
    assert.deepEqual([seats[2]!.user_id, seats[3]!.user_id], [ids.alice, ids.bob]);
    // The caller's own retry is still answered from the first outcome.
    const again = await call('POST', `/voice/rooms/${roomId}/mic/up`, {
      as: 'bob',
      body: { ...shared, seat_index: 3 },
    });
    assert.equal(again.body.data.duplicate, true);
    for (const who of ['alice', 'bob']) {
      await call('POST', `/voice/rooms/${roomId}/mic/down`, { as: who, body: {} });
    }
    const tooLong = await call('POST', `/voice/rooms/${roomId}/join`, {
      as: 'alice',
      body: { request_id: 'x'.repeat(101) },
    });
    assertRefused(tooLong, 'request_id');
  });

  it('lobby paging takes decimal integers only', async () => {
    for (const q of ['limit=0x10', 'limit=1e1', 'offset=', 'limit=%205', 'offset=-1']) {
      const r = await call('GET', `/voice/rooms?${q}`, { as: 'alice' });
      assert.equal(r.status, 400, `${q}: ${JSON.stringify(r.body)}`);
    }
    assert.equal((await call('GET', '/voice/rooms?limit=5&offset=0', { as: 'alice' })).status, 200);
  });

  it('every room id the API accepts is reachable, and a longer one gets the envelope', async () => {
    const longest = await call('GET', `/voice/rooms/${'a'.repeat(128)}`, { as: 'alice' });
    assert.deepEqual([longest.status, longest.body.reason], [404, 'ROOM_NOT_FOUND']);
    const tooLong = await call('GET', `/voice/rooms/${'a'.repeat(129)}`, { as: 'alice' });
    assertRefused(tooLong, 'room_id');
  });

  it('a top-up past 2^53 is refused with a clear 400, and the balance is unchanged', async () => {
    for (const amount of [2 ** 53, 1e300, '5']) {
      const r = await call('POST', '/admin/wallets/topup', {
        admin: true,
        body: { user_id: ids.alice, amount, request_id: `big-${String(amount)}` },
      });
      assertRefused(r, 'amount');
    }
    await ok('POST', '/admin/wallets/topup', {
      admin: true,
      body: { user_id: ids.alice, amount: Number.MAX_SAFE_INTEGER - 1, request_id: 'near-max' },
    });
    const past = await call('POST', '/admin/wallets/topup', {
      admin: true,
      body: { user_id: ids.alice, amount: 2, request_id: 'past-max' },
    });
    assert.equal(past.status, 400, JSON.stringify(past.body));
    assert.equal(past.body.reason, 'BALANCE_LIMIT');
    assert.equal(
      (await ok('GET', '/voice/wallet', { as: 'alice' })).balance,
      Number.MAX_SAFE_INTEGER - 1,
    );
  });

  it('a balance stored past 2^53 − 1 (by an outside writer) is refused, never answered rounded', async () => {
    const store = (digits: string) =>
      sql`UPDATE wallets SET balance = ${sql.raw(digits)} WHERE user_id = ${String(ids.alice)}`.execute(
        app.sql.db,
      );
    await store('9007199254740993');
    const past = await call('GET', '/voice/wallet', { as: 'alice' });
    assert.deepEqual(
      [past.status, past.body.reason, past.body.data],
      [500, 'AMOUNT_NOT_EXACT', undefined],
    );
    await store('9007199254740991');
    const raw = await app.http.inject({
      url: '/api/v1/voice/wallet',
      headers: { authorization: `Bearer ${tokens.alice}` },
    });
    assert.match(raw.body, /"balance":9007199254740991[,}]/);
  });
});
