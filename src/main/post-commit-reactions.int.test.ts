/**
 * Post-commit reactions survive their owner's death right after COMMIT (src/cell/reactions.ts):
 * nodes in one process on MariaDB + Redis, two real media servers registered in the
 * directory. Each test starts a fresh owner, stops its reactions (no fast path, no relay),
 * makes the commit through it and kills it (its cell host aborted). The node that stays, b,
 * has its relay and nothing else that could do the work: its router janitor is stopped, and
 * the members' sockets are on b (alive), so no disconnect or orphan sweep releases anything.
 * Each reaction is then seen done on the media server, in the records and in
 * `room_reactions`, and nothing else closed:
 * - a kicked member's transport and producer are closed, the other member's stay open;
 * - an ended meeting's router is closed;
 * - a meeting (and a voice room) moved to the other media server has its router there and
 *   its member one `meeting.media.reset` (`voice.media.reset`) frame, and can re-join there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { RedisRoomMediaState } from '../adapters/redis/redis-meeting-media.js';
import type { CellKey } from '../cell/lease.js';
import { meetingClient, type MeetingClient } from '../meeting/api/testing/meeting-client.js';
import { TestClient, type Frame } from '../edge/ws/testing/ws-client.js';
import { mediaServerTestOptions } from '../media-server/options.js';
import { startMediaServer, type MediaServer } from '../media-server/server.js';
import {
  CLIENT_DTLS,
  mediaSkipReason,
  opusRtpParameters,
  TEST_TOKEN,
  waitFor,
} from '../media-server/testing/harness.js';
import { FAILOVER_CALLER } from '../media-cluster/media-failover.js';
import { mediaRoomOf } from '../media-cluster/media-servers.js';
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../testing/backends.js';
import { loadConfig } from './config.js';
import { startNode, type RoomsNode } from './node.js';

const skip = (await clusterSkipReason()) || mediaSkipReason();

function hasRouter(server: MediaServer, room: string): boolean {
  try {
    server.registry.routerOfRoom(room);
    return true;
  } catch {
    return false;
  }
}

/** Long enough for the relay's grace (2 s), a lease (1.5 s) and a retry or two. */
const REACTION_WAIT_MS = 20_000;

describe('post-commit reactions when the owner dies right after COMMIT', { skip }, () => {
  const nodes: RoomsNode[] = [];
  const sockets: TestClient[] = [];
  const keyPrefix = testKeyPrefix();
  const servers = new Map<string, MediaServer>();
  let drop: () => Promise<void> = () => Promise.resolve();
  let redis: Redis | undefined;
  let records: RedisRoomMediaState;
  let api: MeetingClient;
  let b: RoomsNode;
  let startNamed: (name: string) => Promise<RoomsNode> = () => Promise.reject(new Error());

  before(async () => {
    const logger = pino({ level: process.env.ROOMS_TEST_LOG ?? 'silent' });
    // Two media servers in the directory; the nodes' own one is media-1.
    for (const [id, port] of [
      ['media-1', 43_000],
      ['media-2', 44_000],
    ] as const) {
      const options = mediaServerTestOptions({
        internalToken: TEST_TOKEN,
        workerBin: process.env.ROOMS_MEDIA_WORKER_BIN ?? null,
        rtcMinPort: port,
        rtcMaxPort: port + 999,
      });
      const registration = {
        id,
        redisUrl: testRedisUrl(),
        keyPrefix,
        advertiseUrl: null,
        ttlMs: 1_500,
      };
      servers.set(id, await startMediaServer(options, logger, process.env, registration));
    }
    const database = await createTestDatabase();
    drop = () => database.drop();
    redis = new Redis(testRedisUrl());
    records = new RedisRoomMediaState({ redis, keyPrefix });
    startNamed = async (name) => {
      const node = await startNode(
        loadConfig({
          ROOMS_NODE_ID: `reactions-${name}`,
          ROOMS_DB_URL: database.url,
          ROOMS_DB_POOL_SIZE: '4',
          ROOMS_REDIS_URL: testRedisUrl(),
          ROOMS_KEY_PREFIX: keyPrefix,
          ROOMS_JWT_SECRET: 'post-commit-reactions-secret-0123456789',
          ROOMS_GRPC_TOKEN: 'post-commit-reactions-grpc-token-012345',
          ROOMS_HTTP_HOST: '127.0.0.1',
          ROOMS_HTTP_PORT: '0',
          ROOMS_GRPC_PORT: '0',
          ROOMS_LEASE_TTL_MS: '1500',
          ROOMS_MEDIA_EMBEDDED: 'false',
          ROOMS_MEDIA_URL: servers.get('media-1')!.url,
          ROOMS_MEDIA_SERVER_ID: 'media-1',
          ROOMS_MEDIA_INTERNAL_TOKEN: TEST_TOKEN,
          ROOMS_LOG_LEVEL: 'silent',
          ROOMS_BCRYPT_COST: '4',
        }),
      );
      nodes.push(node);
      // The janitor also closes ended meetings' routers: only the reaction may do it here.
      await node.routerJanitor.stop();
      return node;
    };
    b = await startNamed('b');
    api = meetingClient(() => b.http);
    await api.users(['h1', 'm1', 'n1', 'h2', 'h3', 'm3', 'v4']);
  });
  after(async () => {
    for (const socket of sockets) socket.close();
    for (const node of nodes) await node.close();
    for (const server of servers.values()) await server.close();
    redis?.disconnect();
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix).catch(() => 0);
    await drop();
  });

  const ok = (ack: Frame): Record<string, unknown> => {
    assert.equal(ack.code, 0, ack.message);
    return ack.data;
  };
  const rest = async (owner: RoomsNode, path: string, as: string, body: object = {}) => {
    const res = await api.call('POST', `/meeting/rooms${path}`, { as, body, via: owner.http });
    assert.ok(res.status < 300, `${path}: ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, unknown>;
  };
  /** A meeting created through `owner` (which then owns it), joined by `members`. */
  const meetingOn = async (owner: RoomsNode, host: string, members: readonly string[]) => {
    const created = await rest(owner, '', host, { title: host });
    const key: CellKey = {
      appCode: 'default',
      roomId: (created.room as { room_code: string }).room_code,
    };
    assert.ok(owner.host.loaded(key), 'the meeting’s owner');
    for (const who of members) await rest(owner, `/${key.roomId}/join`, who);
    return key;
  };
  /** The media server the meeting's state records (asked through node b). */
  const serverOf = async (key: CellKey, who: string) => {
    const reply = (await b.meetings.api.call('MeetingMember', {
      app_code: key.appCode,
      room_code: key.roomId,
      caller_id: String(api.ids[who]),
    })) as { media_server: string | null };
    assert.ok(reply.media_server && servers.has(reply.media_server), String(reply.media_server));
    return reply.media_server;
  };
  /** `who`'s socket on node b, following the meeting. */
  const joinedOnB = async (who: string, key: CellKey) => {
    const socket = await TestClient.connect(
      `${b.httpAddress.replace(/^http/, 'ws')}/ws?token=${api.tokens[who]}`,
    );
    sockets.push(socket);
    ok(await socket.request('meeting.room.join', { room_code: key.roomId }));
    return socket;
  };
  /** A send transport made over the socket, connected, with an Opus producer when asked. */
  const publish = async (socket: TestClient, key: CellKey, produce: boolean) => {
    const room_code = key.roomId;
    const transportId = ok(
      await socket.request('meeting.transport.create', { room_code, direction: 'send' }),
    ).id as string;
    ok(
      await socket.request('meeting.transport.connect', {
        room_code,
        transport_id: transportId,
        dtls_parameters: CLIENT_DTLS,
      }),
    );
    if (!produce) return { transportId, producerId: null };
    const producerId = ok(
      await socket.request('meeting.produce.start', {
        room_code,
        transport_id: transportId,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(),
      }),
    ).producer_id as string;
    return { transportId, producerId };
  };
  /** The meeting's router on `server` (its transports and producers), or null: none. */
  const routerOn = async (server: MediaServer, key: CellKey) => {
    const room = mediaRoomOf(key);
    if (!hasRouter(server, room)) return null;
    try {
      const entry = server.registry.routerOfRoom(room);
      const dump = await entry.router.dump();
      return {
        routerId: entry.router.id,
        transports: [...dump.transportIds].sort(),
        producers: server.registry.producersOfRoom(room).map((p) => p.producer.id),
      };
    } catch (error) {
      // Closed while being read: gone all the same.
      if (!hasRouter(server, room)) return null;
      throw error;
    }
  };
  /** The meeting's reaction rows. */
  const reactionRows = (key: CellKey) =>
    b.sql.db
      .selectFrom('room_reactions')
      .select(['reaction_type', 'status', 'attempts'])
      .where('app_code', '=', key.appCode)
      .where('room_id', '=', key.roomId)
      .execute();
  /** Stops the owner's reactions: the commit made next is followed by nothing of its own. */
  const silence = (owner: RoomsNode) => owner.reactions.stop();
  /** The owner dies right after the commit: its cell host goes, as if killed. */
  const kill = (owner: RoomsNode) => owner.host.abort();
  const until = <T>(check: () => Promise<T | undefined>, what: string) =>
    waitFor(check, what, REACTION_WAIT_MS);

  it('a kicked member’s media is closed by another node, and nothing else', async () => {
    const a = await startNamed('a1');
    const key = await meetingOn(a, 'h1', ['m1', 'n1']);
    const server = servers.get(await serverOf(key, 'h1'))!;
    const kicked = await publish(await joinedOnB('m1', key), key, true);
    const other = await joinedOnB('n1', key);
    const stays = await publish(other, key, false);
    const both = [kicked.transportId, stays.transportId].sort();
    assert.deepEqual((await routerOn(server, key))?.transports, both);
    assert.deepEqual((await routerOn(server, key))?.producers, [kicked.producerId]);

    await silence(a);
    await rest(a, `/${key.roomId}/kick`, 'h1', { user_id: api.ids.m1 });
    assert.deepEqual(
      (await reactionRows(key)).map((r) => [r.reaction_type, r.status]),
      [['meeting.member_media.release', 'pending']],
      'the kick committed with its reaction',
    );
    await kill(a);
    assert.deepEqual((await routerOn(server, key))?.transports, both, 'nobody released it yet');

    await until(async () => {
      const now = await routerOn(server, key);
      return now?.transports.length === 1 ? now : undefined;
    }, 'the kicked member’s transport to be closed');
    await until(
      async () => ((await reactionRows(key)).length === 0 ? true : undefined),
      'the reaction row to go',
    );
    const now = await routerOn(server, key);
    assert.deepEqual(now?.transports, [stays.transportId], 'the other member’s transport stays');
    assert.deepEqual(now?.producers, [], 'the kicked member’s producer is closed');
    // The room hears the kicked member's producer closed (its consumers are dropped).
    await other.waitFor(
      (f) =>
        f.event === 'meeting.member.producer.new' &&
        f.data.producer_id === kicked.producerId &&
        f.data.closed === true,
      REACTION_WAIT_MS,
    );
    const kickedHolds = await records.resources(key, String(api.ids.m1));
    assert.deepEqual([kickedHolds.transports, kickedHolds.producers], [[], []]);
    const otherHolds = await records.resources(key, String(api.ids.n1));
    assert.deepEqual(
      otherHolds.transports.map((t) => t.id),
      [stays.transportId],
    );
  });

  it('an ended meeting’s router is closed by another node', async () => {
    const a = await startNamed('a2');
    const key = await meetingOn(a, 'h2', []);
    const server = servers.get(await serverOf(key, 'h2'))!;
    const router = await routerOn(server, key);
    assert.ok(router, 'the meeting has its router');
    const routers = () => [...servers.values()].reduce((n, m) => n + m.registry.stats.routers, 0);
    const before = routers();

    await silence(a);
    await rest(a, `/${key.roomId}/end`, 'h2');
    assert.ok(
      (await reactionRows(key)).some((r) => r.reaction_type === 'meeting.router.close'),
      'the end committed with its reaction',
    );
    await kill(a);
    assert.equal((await routerOn(server, key))?.routerId, router.routerId, 'still open');

    await until(
      async () => ((await routerOn(server, key)) === null ? true : undefined),
      'the ended meeting’s router to be closed',
    );
    assert.equal(routers(), before - 1, 'no other router closed');
    await until(
      async () => ((await reactionRows(key)).length === 0 ? true : undefined),
      'the reaction rows to go',
    );
  });

  it('a meeting moved to the other media server has its router there and its member told', async () => {
    const a = await startNamed('a3');
    const key = await meetingOn(a, 'h3', ['m3']);
    const from = await serverOf(key, 'h3');
    const to = from === 'media-1' ? 'media-2' : 'media-1';
    const member = await joinedOnB('m3', key);
    await publish(member, key, false);
    assert.equal(await routerOn(servers.get(to)!, key), null, 'nothing on the new server yet');

    await silence(a);
    const moved = (await a.meetings.api.call('MoveMediaServer', {
      app_code: key.appCode,
      room_code: key.roomId,
      caller_id: FAILOVER_CALLER,
      request_id: 'reactions-move-1',
      from_server: from,
      to_server: to,
    })) as { media_server?: string | null };
    assert.equal(moved.media_server, to);
    assert.deepEqual(
      (await reactionRows(key)).map((r) => [r.reaction_type, r.status]),
      [['meeting.media.reset', 'pending']],
      'the move committed with its reaction',
    );
    await kill(a);
    assert.equal(await routerOn(servers.get(to)!, key), null, 'nobody reset it yet');
    assert.deepEqual(member.events('meeting.media.reset'), []);

    const reset = await member.waitFor((f) => f.event === 'meeting.media.reset', REACTION_WAIT_MS);
    assert.equal(reset.data.room_code, key.roomId);
    assert.equal(reset.data.media_server, to);
    const router = await routerOn(servers.get(to)!, key);
    assert.ok(router, 'the router is on the new server');
    assert.equal(reset.data.router_id, router.routerId);
    await until(
      async () => ((await reactionRows(key)).length === 0 ? true : undefined),
      'the reaction row to go',
    );
    // The member's records of the old server are forgotten, to be made again.
    const holds = await records.resources(key, String(api.ids.m3));
    assert.deepEqual(holds.transports, []);
    assert.equal(member.events('meeting.media.reset').length, 1, 'one reset');
    // Its re-join works on the new server (once the dead owner's lease ran out).
    await until(async () => {
      const ack = await member.request('meeting.room.join', { room_code: key.roomId });
      return ack.code === 0 ? true : undefined;
    }, 'the member’s re-join');
    await publish(member, key, false);
    assert.equal((await routerOn(servers.get(to)!, key))?.transports.length, 1);
  });

  it('a voice room moved to the other media server has its router there and its member told', async () => {
    const a = await startNamed('a4');
    const voice = async (path: string, body: object = {}) => {
      const res = await api.call('POST', `/voice/rooms${path}`, { as: 'v4', body, via: a.http });
      assert.ok(res.status < 300, `${path}: ${JSON.stringify(res.body)}`);
      return res.body.data as Record<string, unknown>;
    };
    const key: CellKey = {
      appCode: 'default',
      roomId: (await voice('', { title: '迁移' })).room_id as string,
    };
    assert.ok(a.host.loaded(key), 'the room’s owner');
    await voice(`/${key.roomId}/join`);
    const member = await TestClient.connect(
      `${b.httpAddress.replace(/^http/, 'ws')}/ws?token=${api.tokens.v4}`,
    );
    sockets.push(member);
    ok(await member.request('room.subscribe', { room_id: key.roomId }));
    ok(await member.request('voice.media.join', { room_id: key.roomId }));
    ok(await member.request('voice.transport.create', { room_id: key.roomId, direction: 'recv' }));
    const { media_server: from } = await b.voice.api.call('GetRoomMedia', {
      app_code: key.appCode,
      room_id: key.roomId,
    });
    assert.ok(servers.has(from), from);
    const to = from === 'media-1' ? 'media-2' : 'media-1';
    const room = mediaRoomOf(key, 'voice_room');
    assert.ok(hasRouter(servers.get(from)!, room));
    assert.equal(hasRouter(servers.get(to)!, room), false, 'nothing on the new server yet');

    await silence(a);
    await a.voice.api.call('MoveMediaServer', {
      app_code: key.appCode,
      room_id: key.roomId,
      request_id: 'reactions-move-2',
      from_server: from,
      to_server: to,
    });
    assert.deepEqual(
      (await reactionRows(key)).map((r) => [r.reaction_type, r.status]),
      [['voice_room.media.reset', 'pending']],
      'the move committed with its reaction',
    );
    await kill(a);
    assert.equal(hasRouter(servers.get(to)!, room), false, 'nobody reset it yet');
    assert.deepEqual(member.events('voice.media.reset'), []);

    const reset = await member.waitFor((f) => f.event === 'voice.media.reset', REACTION_WAIT_MS);
    assert.equal(reset.data.room_id, key.roomId);
    assert.equal(reset.data.media_server, to);
    assert.equal(reset.data.router_id, servers.get(to)!.registry.routerOfRoom(room).router.id);
    await until(
      async () => ((await reactionRows(key)).length === 0 ? true : undefined),
      'the reaction row to go',
    );
    assert.equal(member.events('voice.media.reset').length, 1, 'one reset');
    // Its media join works on the new server (once the dead owner's lease ran out).
    await until(async () => {
      const ack = await member.request('voice.media.join', { room_id: key.roomId });
      return ack.code === 0 ? true : undefined;
    }, 'the member’s media re-join');
    ok(await member.request('voice.transport.create', { room_id: key.roomId, direction: 'recv' }));
    const dump = await servers.get(to)!.registry.routerOfRoom(room).router.dump();
    assert.equal(dump.transportIds.length, 1, 'its new transport is on the new server');
  });
});
