/**
 * `GET /api/v1/voice/gifts` (the gift picker's list) from outside, on a node (SQLite,
 * Fastify `inject`): what the admin API wrote for the caller's app, active gifts only,
 * cheapest first; writing stays admin-only.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RoomsNode } from '../../main/node.js';
import {
  assertFailure,
  client,
  envelope,
  startTestNode,
} from '../../edge/http/auth-routes.contract.js';

const ADMIN = 'gift-catalog-test-admin-token';

describe('GET /api/v1/voice/gifts', () => {
  let dir: string;
  let node: RoomsNode;
  let user: string;
  let elsewhere: string;

  const gifts = (token?: string) =>
    node.http.inject({
      method: 'GET',
      url: '/api/v1/voice/gifts',
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
  const put = (id: string, body: object, headers: Record<string, string> = {}) =>
    node.http.inject({
      method: 'PUT',
      url: `/api/v1/admin/gifts/${id}`,
      headers: { 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(body),
    });
  const listOf = async (token: string) => {
    const res = await gifts(token);
    assert.equal(res.statusCode, 200, res.body);
    return envelope<{ list: unknown[] }>(res).data!.list;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-gifts-'));
    node = await startTestNode({
      ROOMS_DB_URL: join(dir, 'rooms.sqlite'),
      ROOMS_ADMIN_TOKEN: ADMIN,
    });
    user = (await client(node).signUp('gift_reader')).token;
    elsewhere = (await client(node).signUp('gift_reader', 'secret1', 'other-app')).token;
  });
  after(async () => {
    await node?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is empty before the operator adds any gift', async () => {
    assert.deepEqual(await listOf(user), []);
  });

  it('lists the active gifts of the caller’s app, cheapest first, with id, name and price', async () => {
    const admin = { 'x-admin-token': ADMIN };
    for (const [id, body] of [
      ['rocket', { name: '火箭', price: 500 }],
      ['rose', { name: 'Rose', price: 10 }],
      ['heart', { name: 'Heart', price: 10 }],
      ['retired', { name: 'Old', price: 1, active: false }],
      ['yacht', { app_code: 'other-app', name: 'Yacht', price: 9000 }],
    ] as const) {
      const res = await put(id, body, admin);
      assert.equal(res.statusCode, 200, res.body);
    }
    assert.deepEqual(await listOf(user), [
      { gift_id: 'heart', name: 'Heart', price: 10 },
      { gift_id: 'rose', name: 'Rose', price: 10 },
      { gift_id: 'rocket', name: '火箭', price: 500 },
    ]);
    assert.deepEqual(await listOf(elsewhere), [{ gift_id: 'yacht', name: 'Yacht', price: 9000 }]);
  });

  it('follows the catalog: a gift retired by the operator leaves the list', async () => {
    await put('rocket', { name: '火箭', price: 500, active: false }, { 'x-admin-token': ADMIN });
    const ids = ((await listOf(user)) as { gift_id: string }[]).map((g) => g.gift_id);
    assert.deepEqual(ids, ['heart', 'rose']);
  });

  it('refuses a caller without a valid token (401)', async () => {
    assertFailure(await gifts(), 401, 'TOKEN_MISSING');
    assertFailure(await gifts('not-a-jwt'), 401, 'TOKEN_INVALID');
  });

  it('leaves writing to the operator: a user token cannot change the catalog', async () => {
    const asUser = await put(
      'rose',
      { name: 'Free rose', price: 0 },
      { authorization: `Bearer ${user}` },
    );
    assertFailure(asUser, 401, 'BAD_ADMIN_TOKEN');
    const listed = (await listOf(user)) as { gift_id: string; price: number }[];
    assert.equal(listed.find((g) => g.gift_id === 'rose')?.price, 10);
  });
});
