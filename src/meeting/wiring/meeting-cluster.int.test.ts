/**
 * Meetings on two nodes (MariaDB + Redis, in one process): any node serves any meeting, the
 * call forwarded once to the owner over gRPC `MeetingCall` with the cluster token; the
 * password lockout and the single-meeting index are shared by both nodes. A third node
 * names the same media server differently: the media server a meeting's state records
 * decides where every node sends that meeting's media.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { meetingClient, type MeetingClient } from '../api/testing/meeting-client.js';
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import type { MediaServer } from '../../media-server/server.js';
import {
  CLIENT_DTLS,
  TEST_TOKEN,
  mediaSkipReason,
  startTestMediaServer,
  waitFor,
} from '../../media-server/testing/harness.js';
import { TestClient } from '../../edge/ws/testing/ws-client.js';
import { routerTransports } from '../signalling/testing/stack.js';
import { loadConfig } from '../../main/config.js';
import { startNode, type RoomsNode } from '../../main/node.js';

const skip = (await clusterSkipReason()) || mediaSkipReason();

describe('meetings on two nodes', { skip }, () => {
  const nodes: RoomsNode[] = [];
  let drop: () => Promise<void> = () => Promise.resolve();
  const keyPrefix = testKeyPrefix();
  let a: MeetingClient;
  let media: MediaServer | undefined;

  before(async () => {
    // One media server shared by the cluster: every node's router calls reach it.
    media = await startTestMediaServer({ workers: 1 });
    const database = await createTestDatabase();
    drop = () => database.drop();
    for (const name of ['a', 'b', 'c']) {
      nodes.push(
        await startNode(
          loadConfig({
            ROOMS_NODE_ID: `meeting-${name}`,
            ROOMS_DB_URL: database.url,
            ROOMS_DB_POOL_SIZE: '4',
            ROOMS_REDIS_URL: testRedisUrl(),
            ROOMS_KEY_PREFIX: keyPrefix,
            ROOMS_JWT_SECRET: 'meeting-cluster-secret-0123456789abcdef',
            ROOMS_GRPC_TOKEN: 'meeting-cluster-grpc-token-0123456789abc',
            ROOMS_HTTP_HOST: '127.0.0.1',
            ROOMS_HTTP_PORT: '0',
            ROOMS_GRPC_PORT: '0',
            ROOMS_MEDIA_EMBEDDED: 'false',
            ROOMS_MEDIA_URL: media.url,
            ROOMS_MEDIA_INTERNAL_TOKEN: TEST_TOKEN,
            ROOMS_MEDIA_SERVER_ID: name === 'c' ? 'media-elsewhere' : 'media-1',
            ROOMS_LOG_LEVEL: 'silent',
            ROOMS_BCRYPT_COST: '4',
          }),
        ),
      );
    }
    // Tokens are valid on every node (one JWT secret, one database): `via` picks the node.
    a = meetingClient(() => nodes[0]!.http);
    await a.users(['alice', 'bob', 'carol', 'dave', 'erin']);
  });
  after(async () => {
    for (const node of nodes) await node.close();
    await media?.close();
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix).catch(() => 0);
    await drop();
  });

  it('a meeting created on one node is joined, read and ended through the other', async () => {
    const created = await a.call('POST', '/meeting/rooms', {
      as: 'alice',
      body: { title: '跨节点', password: 'pw-1234' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const code = created.body.data.room.room_code as string;
    const owner = nodes.find((n) => n.host.loaded({ appCode: 'default', roomId: code }));
    assert.ok(owner, 'one node owns the meeting');
    const other = nodes.find((n) => n !== owner)!;
    const call = (m: 'GET' | 'POST', url: string, as: string, body?: unknown) =>
      a.call(m, url, { as, ...(body === undefined ? {} : { body }), via: other.http });

    const joined = await call('POST', `/meeting/rooms/${code}/join`, 'bob', {
      password: 'pw-1234',
    });
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
    assert.equal(joined.body.data.participant.user_id, a.ids.bob);
    assert.equal(other.host.loaded({ appCode: 'default', roomId: code }), undefined, 'forwarded');
    // One router per meeting on the shared media server, made at create and reused (S5).
    assert.equal(typeof created.body.data.router_id, 'string');
    assert.equal(joined.body.data.router_id, created.body.data.router_id);
    assert.ok(Array.isArray(joined.body.data.rtp_capabilities.codecs));
    assert.equal(media!.registry.stats.routers, 1);

    // Refusals come back through the forward with their message and status.
    for (let i = 0; i < 5; i++) {
      const wrong = await call('POST', `/meeting/rooms/${code}/join`, 'carol', { password: 'no' });
      assert.deepEqual([wrong.status, wrong.body.message], [400, '会议密码错误']);
    }
    const locked = await a.call('POST', `/meeting/rooms/${code}/join`, {
      as: 'carol',
      body: { password: 'pw-1234' },
    });
    assert.deepEqual([locked.status, locked.body.message], [400, '密码尝试过多，请稍后再试']);

    const detail = await call('GET', `/meeting/rooms/${code}`, 'bob');
    assert.equal(detail.status, 200);
    assert.equal(detail.body.data.online_count, 2);
    const retry = { request_id: 'cluster-chat-1', content: 'hi' };
    const c1 = await call('POST', `/meeting/rooms/${code}/chats`, 'bob', retry);
    const c2 = await a.call('POST', `/meeting/rooms/${code}/chats`, { as: 'bob', body: retry });
    assert.equal(c1.status, 201);
    assert.deepEqual(c2.body.data, c1.body.data, 'a retry on the other node: the first answer');
    // Forwarded calls sent without a request id (the create, the joins) kept no outcome.
    const outcomes = await owner.sql.db
      .selectFrom('room_request_outcomes')
      .select('request_id')
      .where('room_id', '=', code)
      .execute();
    assert.deepEqual(
      outcomes.map((r) => r.request_id),
      [`${a.ids.bob}:cluster-chat-1`],
    );
    const notHost = await call('POST', `/meeting/rooms/${code}/end`, 'bob', {});
    assert.deepEqual([notHost.status, notHost.body.message], [403, '仅主持人可操作']);
    const ended = await call('POST', `/meeting/rooms/${code}/end`, 'alice', {});
    assert.equal(ended.status, 200);
    assert.equal(ended.body.data.room.status, 2);
    // The end closes the meeting's router on the media server (after the commit, on the owner).
    const routers = (): number => media!.registry.stats.routers;
    for (let i = 0; routers() !== 0 && i < 100; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(routers(), 0, 'the ended meeting has no router');
  });

  it('one user joining two meetings owned by two nodes at once gets into exactly one', async () => {
    const m1 = await a.call('POST', '/meeting/rooms', { as: 'alice', body: { title: 'm1' } });
    const m2 = await a.call('POST', '/meeting/rooms', {
      as: 'bob',
      body: { title: 'm2' },
      via: nodes[1]!.http,
    });
    const codes = [m1, m2].map((r) => r.body.data.room.room_code as string);
    const [x, y] = await Promise.all([
      a.call('POST', `/meeting/rooms/${codes[0]}/join`, { as: 'dave', body: {} }),
      a.call('POST', `/meeting/rooms/${codes[1]}/join`, {
        as: 'dave',
        body: {},
        via: nodes[1]!.http,
      }),
    ]);
    assert.deepEqual([x.status, y.status].sort(), [200, 400], JSON.stringify([x.body, y.body]));
    assert.equal((x.status === 400 ? x : y).body.message, '你当前已在其他会议中');
  });

  it('a meeting’s media goes to the server its state records, from every node', async () => {
    const socket = (node: RoomsNode, who: string) =>
      TestClient.connect(`${node.httpAddress.replace(/^http/, 'ws')}/ws?token=${a.tokens[who]}`);
    // Sockets stay open to the end: a closed one would release its transports.
    const clients: TestClient[] = [];
    const transportOn = async (node: RoomsNode, who: string, code: string) => {
      const client = await socket(node, who);
      clients.push(client);
      assert.equal((await client.request('meeting.room.join', { room_code: code })).code, 0);
      const ack = await client.request('meeting.transport.create', {
        room_code: code,
        direction: 'send',
      });
      return [ack.code, ack.message ?? null];
    };
    const [nodeA, nodeB, nodeC] = nodes as [RoomsNode, RoomsNode, RoomsNode];
    // Created on a node that names the server media-1: nodes a and b reach it, c does not.
    const m1 = await a.call('POST', '/meeting/rooms', { as: 'carol', body: { title: 'media' } });
    const code1 = m1.body.data.room.room_code as string;
    assert.equal(typeof m1.body.data.router_id, 'string');
    assert.deepEqual(await transportOn(nodeB, 'carol', code1), [0, null]);
    assert.deepEqual(await transportOn(nodeC, 'carol', code1), [-1, '会议媒体服务暂不可用']);
    assert.equal(await routerTransports(media!, code1), 1, 'node c created nothing elsewhere');
    await a.call('POST', `/meeting/rooms/${code1}/end`, { as: 'carol', body: {} });

    // Created through node c: it records media-elsewhere, which only c can reach.
    const m2 = await a.call('POST', '/meeting/rooms', {
      as: 'carol',
      body: { title: 'media-2' },
      via: nodeC.http,
    });
    assert.equal(m2.status, 201, JSON.stringify(m2.body));
    const code2 = m2.body.data.room.room_code as string;
    assert.deepEqual(await transportOn(nodeC, 'carol', code2), [0, null]);
    assert.deepEqual(await transportOn(nodeA, 'carol', code2), [-1, '会议媒体服务暂不可用']);
    await a.call('POST', `/meeting/rooms/${code2}/end`, { as: 'carol', body: {} });
    for (const client of clients) client.close();
  });

  it('an invite whose recorded outcome is lost is answered from its notifications on the other node, sending nothing more', async () => {
    // carol is in no meeting now (alice and bob are, in m1 and m2): she hosts this one.
    const created = await a.call('POST', '/meeting/rooms', { as: 'carol', body: { title: 'm3' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const code = created.body.data.room.room_code as string;
    const body = { request_id: 'cluster-invite-1', invitee_ids: [a.ids.alice, a.ids.bob] };
    const first = await a.call('POST', `/meeting/rooms/${code}/invite`, { as: 'carol', body });
    assert.deepEqual([first.status, first.body.data], [200, { pushed: 2, skipped: 0 }]);
    // As if the node died between the notifications' commit and the outcome's record.
    const redis = new Redis(testRedisUrl());
    try {
      const key = `${keyPrefix}kv:meeting:invite-req:default:${code}:${a.ids.carol}:cluster-invite-1`;
      assert.equal(await redis.del(key), 1, 'the recorded outcome was there');
    } finally {
      redis.disconnect();
    }
    const retry = await a.call('POST', `/meeting/rooms/${code}/invite`, {
      as: 'carol',
      body,
      via: nodes[1]!.http,
    });
    assert.deepEqual([retry.status, retry.body.data], [200, { pushed: 2, skipped: 0 }]);
    for (const who of ['alice', 'bob']) {
      const list = await a.call('GET', '/notifications?limit=50', { as: who, via: nodes[1]!.http });
      const invites = (list.body.data.list as { extra: { room_code?: string } }[]).filter(
        (n) => n.extra.room_code === code,
      );
      assert.equal(invites.length, 1, `${who}: one invite`);
    }
    await a.call('POST', `/meeting/rooms/${code}/end`, { as: 'carol', body: {} });
  });

  it('a reconnect through the other node: the old socket is cut at once (replaces) and releases what it made there, never what the new socket made', async () => {
    const created = await a.call('POST', '/meeting/rooms', {
      as: 'erin',
      body: { title: 'switch' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const code = created.body.data.room.room_code as string;
    const [nodeA, nodeB] = nodes as [RoomsNode, RoomsNode];
    const open = async (node: RoomsNode, query: string) => {
      const url = `${node.httpAddress.replace(/^http/, 'ws')}/ws?token=${a.tokens.erin}${query}`;
      const client = await TestClient.connect(url);
      assert.equal((await client.request('meeting.room.join', { room_code: code })).code, 0);
      const ack = await client.request('meeting.transport.create', {
        room_code: code,
        direction: 'send',
      });
      assert.equal(ack.code, 0, ack.message);
      return { client, transportId: ack.data.id as string };
    };
    const old = await open(nodeA, '&connection_id=erin-wifi-01');
    // Its path goes: node a would only notice at a missed ping.
    old.client.losePath();
    const fresh = await open(nodeB, '&connection_id=erin-cell-02&replaces=erin-wifi-01');
    try {
      await waitFor(
        async () => ((await routerTransports(media!, code)) === 1 ? true : undefined),
        'the old socket’s transport closed',
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(await routerTransports(media!, code), 1, 'the new socket’s transport closed');
      const connect = await fresh.client.request('meeting.transport.connect', {
        room_code: code,
        transport_id: fresh.transportId,
        dtls_parameters: CLIENT_DTLS,
      });
      assert.equal(connect.code, 0, connect.message);
      const gone = await fresh.client.request('meeting.transport.connect', {
        room_code: code,
        transport_id: old.transportId,
        dtls_parameters: CLIENT_DTLS,
      });
      assert.equal(gone.message, '会议资源不存在');
    } finally {
      old.client.close();
      fresh.client.close();
      await a.call('POST', `/meeting/rooms/${code}/end`, { as: 'erin', body: {} });
    }
  });

  // Last: it closes a node.
  it('the waiting list is the cell’s: listed and admitted through another node after its owner closed', async () => {
    const created = await a.call('POST', '/meeting/rooms', {
      as: 'carol',
      body: { title: 'm4', waiting_room: true },
      via: nodes[0]!.http,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const code = created.body.data.room.room_code as string;
    const waits = await a.call('POST', `/meeting/rooms/${code}/join`, {
      as: 'erin',
      body: {},
      via: nodes[1]!.http,
    });
    assert.equal(waits.body.data?.waiting, true, JSON.stringify(waits.body));
    const redis = new Redis(testRedisUrl());
    let ownerId: string | undefined;
    try {
      ownerId = (await redis.get(`${keyPrefix}lease:default\u0000${code}`))?.split('\n')[0];
    } finally {
      redis.disconnect();
    }
    const owner = nodes[['meeting-a', 'meeting-b', 'meeting-c'].indexOf(ownerId ?? '')];
    assert.ok(owner, `the owner ${ownerId} is one of the nodes`);
    await owner.close();
    const other = nodes.find((n) => n !== owner)!;
    // Between owners a call may answer 503: retried, as a client does.
    const retried = async (call: () => ReturnType<typeof a.call>) => {
      for (let i = 0; ; i++) {
        const answer = await call();
        if (answer.status !== 503 || i === 50) return answer;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const list = await retried(() =>
      a.call('GET', `/meeting/rooms/${code}/waiting`, { as: 'carol', via: other.http }),
    );
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.deepEqual(
      list.body.data.list.map((w: { user_id: number }) => w.user_id),
      [a.ids.erin],
    );
    const admitted = await retried(() =>
      a.call('POST', `/meeting/rooms/${code}/waiting/admit`, {
        as: 'carol',
        body: { user_id: a.ids.erin, request_id: 'admit-erin' },
        via: other.http,
      }),
    );
    assert.deepEqual(admitted.body.data.user_ids, [a.ids.erin], JSON.stringify(admitted.body));
    const detail = await a.call('GET', `/meeting/rooms/${code}`, { as: 'erin', via: other.http });
    assert.equal(detail.body.data.online_count, 2);
  });
});
