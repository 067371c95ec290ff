/**
 * The host grace judged across nodes (three in-process nodes on MariaDB + Redis + one media
 * server; each case uses two of them), with short settings: a host with a WebSocket on each
 * of two nodes stays host when one closes and loses the role after the grace once both
 * have; a node that stops telling the meeting anything (its refresh stopped, its cell host
 * aborted, as if killed) stops counting after the presence TTL, and then the host's grace
 * runs.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { meetingClient, type MeetingClient } from '../api/testing/meeting-client.js';
import { TestClient } from '../../edge/ws/testing/ws-client.js';
import type { MediaServer } from '../../media-server/server.js';
import {
  TEST_TOKEN,
  mediaSkipReason,
  startTestMediaServer,
} from '../../media-server/testing/harness.js';
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import { loadConfig } from '../../main/config.js';
import { startNode, type RoomsNode } from '../../main/node.js';

const skip = (await clusterSkipReason()) || mediaSkipReason();
const HOST_GRACE_MS = 1_000;
/** The signalling refreshes every 500 ms. */
const PRESENCE_TTL_MS = 1_500;

describe('meeting host presence across nodes', { skip }, () => {
  const nodes: RoomsNode[] = [];
  const sockets: TestClient[] = [];
  const keyPrefix = testKeyPrefix();
  let drop: () => Promise<void> = () => Promise.resolve();
  let api: MeetingClient;
  let media: MediaServer | undefined;

  const start = async (name: string, databaseUrl: string) =>
    startNode(
      loadConfig({
        ROOMS_NODE_ID: `presence-${name}`,
        ROOMS_DB_URL: databaseUrl,
        ROOMS_DB_POOL_SIZE: '4',
        ROOMS_REDIS_URL: testRedisUrl(),
        ROOMS_KEY_PREFIX: keyPrefix,
        ROOMS_JWT_SECRET: 'meeting-presence-secret-0123456789abcdef',
        ROOMS_GRPC_TOKEN: 'meeting-presence-grpc-token-0123456789ab',
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: '0',
        ROOMS_GRPC_PORT: '0',
        ROOMS_MEDIA_EMBEDDED: 'false',
        ROOMS_MEDIA_URL: media!.url,
        ROOMS_MEDIA_INTERNAL_TOKEN: TEST_TOKEN,
        ROOMS_LOG_LEVEL: 'silent',
        ROOMS_BCRYPT_COST: '4',
        ROOMS_TIMER_TICK_MS: '50',
        ROOMS_MEETING_HOST_GRACE_MS: String(HOST_GRACE_MS),
        ROOMS_MEETING_PRESENCE_TTL_MS: String(PRESENCE_TTL_MS),
      }),
    );

  before(async () => {
    media = await startTestMediaServer({ workers: 1 });
    const database = await createTestDatabase();
    drop = () => database.drop();
    for (const name of ['a', 'b', 'c']) nodes.push(await start(name, database.url));
    api = meetingClient(() => nodes[0]!.http);
    await api.users(['h1', 'm1', 'h2', 'm2']);
  });
  after(async () => {
    for (const s of sockets) s.close();
    for (const node of nodes) await node.close();
    await media?.close();
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix).catch(() => 0);
    await drop();
  });

  /** A `/ws` socket of `who` on `node`, joined to the meeting's channel. */
  const joinedSocket = async (node: RoomsNode, who: string, code: string) => {
    const url = `${node.httpAddress.replace(/^http/, 'ws')}/ws?token=${api.tokens[who]}`;
    const client = await TestClient.connect(url);
    sockets.push(client);
    const ack = await client.request('meeting.room.join', { room_code: code });
    assert.equal(ack.code, 0, ack.message);
    return client;
  };
  /** A meeting of `host` with `member` in it, created and owned on `owner`. */
  const meeting = async (owner: RoomsNode, host: string, member: string) => {
    const created = await api.call('POST', '/meeting/rooms', {
      as: host,
      body: { title: '跨节点在线' },
      via: owner.http,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const code = created.body.data.room.room_code as string;
    const joined = await api.call('POST', `/meeting/rooms/${code}/join`, {
      as: member,
      body: {},
      via: owner.http,
    });
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
    assert.ok(owner.host.loaded({ appCode: 'default', roomId: code }), 'the meeting’s owner');
    return code;
  };
  const hostOf = async (code: string, who: string) => {
    const res = await api.call('GET', `/meeting/rooms/${code}`, { as: who });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data.room.host_id as number;
  };

  it('a host on both nodes stays host when one node’s socket closes; with both closed the grace moves the role', async () => {
    const [a, b] = [nodes[0]!, nodes[1]!];
    const code = await meeting(a, 'h1', 'm1');
    const onA = await joinedSocket(a, 'h1', code);
    const onB = await joinedSocket(b, 'h1', code);
    const member = await joinedSocket(a, 'm1', code);

    onA.close(); // node A's last socket of the host: node B still has one
    // Past the grace, and past the presence TTL: node B's refreshes keep its lease.
    await sleep(HOST_GRACE_MS + PRESENCE_TTL_MS + 500);
    assert.deepEqual(member.events('meeting.host.changed'), []);
    assert.equal(await hostOf(code, 'm1'), api.ids.h1);

    onB.close(); // the host's last socket on any node
    const changed = await member.waitFor((f) => f.event === 'meeting.host.changed', 10_000);
    assert.deepEqual(
      [changed.data.old_host_id, changed.data.new_host_id, changed.data.auto_reason],
      [api.ids.h1, api.ids.m1, 'host_grace_expired'],
    );
    assert.equal(await hostOf(code, 'm1'), api.ids.m1);
  });

  it('a node that dies without a word: after the presence TTL the host’s grace starts, then the role moves', async () => {
    const [a, c] = [nodes[0]!, nodes[2]!];
    const code = await meeting(a, 'h2', 'm2');
    const member = await joinedSocket(a, 'm2', code);
    await joinedSocket(c, 'h2', code); // the host only on node C
    await sleep(PRESENCE_TTL_MS + 500);
    assert.equal(await hostOf(code, 'm2'), api.ids.h2, 'node C’s refreshes hold the lease');

    // Node C stops as if killed: no refresh, no disconnect notice (its socket stays open),
    // its cell host gone. Only the lease running out in the meeting can tell.
    await c.meetingSignalling.close();
    await c.host.abort();
    const changed = await member.waitFor((f) => f.event === 'meeting.host.changed', 10_000);
    assert.deepEqual(
      [changed.data.old_host_id, changed.data.new_host_id, changed.data.auto_reason],
      [api.ids.h2, api.ids.m2, 'host_grace_expired'],
    );
    assert.equal(await hostOf(code, 'm2'), api.ids.m2);
  });
});
