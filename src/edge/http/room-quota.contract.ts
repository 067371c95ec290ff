/**
 * Room-creation quotas of the REST API, as a client sees them: per-user rate (429 with
 * Retry-After) and open-room count (409), retries of a committed creation never refused,
 * other users unaffected. Runs on one embedded node and on two cluster nodes sharing Redis.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RoomsNode } from '../../main/node.js';
import { assertFailure, client } from './auth-routes.contract.js';

/** Both backends run with these limits: 4 creations a minute, 3 open rooms per owner. */
export const QUOTA_ENV = {
  ROOMS_ROOM_CREATE_LIMIT: '4',
  ROOMS_ROOM_CREATE_WINDOW_S: '60',
  ROOMS_MAX_OPEN_ROOMS_PER_OWNER: '3',
};

export function roomQuotaContract(
  name: string,
  startNodes: () => Promise<{ nodes: RoomsNode[]; close(): Promise<void> }>,
  options: { skip?: string | false } = {},
): void {
  describe(`room-creation quotas (${name})`, { skip: options.skip ?? false }, () => {
    let nodes: RoomsNode[];
    let close: () => Promise<void>;
    const tokens: Record<string, string> = {};
    let turn = 0;
    /** Each call goes to the next node: in a cluster, counters must be shared. */
    const nextNode = () => nodes[turn++ % nodes.length]!;

    const create = async (as: string, body: Record<string, unknown>) =>
      nextNode().http.inject({
        method: 'POST',
        url: '/api/v1/voice/rooms',
        headers: { authorization: `Bearer ${tokens[as]}` },
        payload: body,
      });
    const created = async (as: string, requestId?: string) => {
      const res = await create(as, {
        title: 'Quota room',
        seat_count: 2,
        ...(requestId ? { request_id: requestId } : {}),
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json<{ data: { room_id: string; duplicate: boolean } }>().data;
    };
    const closeRoom = async (as: string, roomId: string) => {
      const res = await nextNode().http.inject({
        method: 'POST',
        url: `/api/v1/voice/rooms/${roomId}/close`,
        headers: { authorization: `Bearer ${tokens[as]}` },
      });
      assert.equal(res.statusCode, 200, res.body);
    };

    before(async () => {
      const started = await startNodes();
      nodes = started.nodes;
      close = () => started.close();
      const api = client(nodes[0]!);
      for (const user of ['alice', 'bob', 'carol', 'dave', 'erin']) {
        tokens[user] = (await api.signUp(`quota-${user}`)).token;
      }
    });
    after(async () => {
      await close?.();
    });

    it('refuses creations past the rate with 429 and Retry-After; others are unaffected', async () => {
      const bobRooms: string[] = [];
      for (let i = 0; i < 4; i++) {
        bobRooms.push((await created('bob', `bob-${i}`)).room_id);
        await closeRoom('bob', bobRooms[i]!);
      }
      const refused = await create('bob', { title: 'one too many', request_id: 'bob-4' });
      const body = assertFailure(refused, 429, 'CREATE_RATE_LIMITED');
      assert.match(body.message, /创建房间过于频繁/);
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
        `${retryAfter}`,
      );
      assertFailure(await create('bob', { title: 'no request id' }), 429, 'CREATE_RATE_LIMITED');
      // Another user has their own allowance.
      assert.equal((await created('carol', 'carol-0')).duplicate, false);
      // A retry of a creation that committed gets its first answer, quota or not.
      const again = await created('bob', 'bob-3');
      assert.deepEqual(again, {
        room_id: bobRooms[3],
        duplicate: true,
        room_version: 1,
      });
    });

    it('refuses a creation past the open-room limit (409) until one is closed', async () => {
      const rooms = [];
      for (let i = 0; i < 3; i++) rooms.push((await created('alice', `alice-${i}`)).room_id);
      const refused = await create('alice', { title: 'fourth', request_id: 'alice-3' });
      const body = assertFailure(refused, 409, 'TOO_MANY_OPEN_ROOMS');
      assert.match(body.message, /3/);
      // Retrying a committed creation is fine at the limit: it creates nothing.
      assert.equal((await created('alice', 'alice-2')).duplicate, true);
      assert.equal((await created('dave', 'dave-0')).duplicate, false, 'other owners unaffected');
      await closeRoom('alice', rooms[0]!);
      assert.equal((await created('alice', 'alice-3')).duplicate, false);
      assertFailure(
        await create('alice', { title: 'x', request_id: 'alice-4' }),
        409,
        'TOO_MANY_OPEN_ROOMS',
      );
    });

    it('counts only creations: refused requests and retries use up nothing', async () => {
      for (let i = 0; i < 6; i++) {
        const res = await create('erin', { title: '', request_id: `bad-${i}` });
        assertFailure(res, 400);
      }
      // Retries of a committed creation (the client lost the answer) create nothing.
      const first = await created('erin', 'erin-same');
      for (let i = 0; i < 5; i++) {
        assert.deepEqual(await created('erin', 'erin-same'), { ...first, duplicate: true });
      }
      await closeRoom('erin', first.room_id);
      for (let i = 0; i < 3; i++)
        await closeRoom('erin', (await created('erin', `erin-${i}`)).room_id);
      assertFailure(
        await create('erin', { title: 'fifth', request_id: 'erin-9' }),
        429,
        'CREATE_RATE_LIMITED',
      );
    });
  });
}
