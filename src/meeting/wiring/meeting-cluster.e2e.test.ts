/**
 * Meetings on 3 node processes (MariaDB + Redis, one media server shared by the cluster),
 * through the public API only: REST on one node, the WebSocket on another, the meeting's
 * owner on a third. Then kill -9 of the owner during the empty-TTL countdown: the meeting
 * still ends (`empty_ttl`) on another node, within the TTL plus the lease TTL. A request id
 * sent again with another request is refused on every node, before and after a kill -9.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
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
  freePort,
  testKeyPrefix,
  testRedisUrl,
  type TestDatabase,
} from '../../testing/backends.js';
import {
  ServerProcess,
  TEST_TIMEOUT_MS,
  reportingOutput,
  waitForHealthy,
} from '../../testing/server-process.js';

const skip = (await clusterSkipReason()) || mediaSkipReason();
const LEASE_TTL_MS = 2_000;
const EMPTY_TTL_MS = 2_000;

interface Node {
  readonly name: string;
  readonly process: ServerProcess;
  readonly http: string;
}
interface Answer {
  status: number;
  body: { code: number; message: string; data: any };
}

describe('meetings on 3 node processes', { skip, timeout: TEST_TIMEOUT_MS * 2 }, () => {
  let database: TestDatabase;
  let media: MediaServer;
  const keyPrefix = testKeyPrefix();
  const redis = new Redis(testRedisUrl(), { lazyConnect: true });
  const nodes: Node[] = [];
  const sockets: TestClient[] = [];
  const tokens: Record<string, string> = {};
  const ids: Record<string, number> = {};

  const call = async (node: Node, method: string, path: string, as?: string, body?: unknown) => {
    const res = await fetch(`${node.http}/api/v1${path}`, {
      method,
      headers: {
        ...(as ? { authorization: `Bearer ${tokens[as]}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Answer['body'] };
  };
  const ownerOf = async (code: string) => {
    const value = await redis.get(`${keyPrefix}lease:default\u0000${code}`);
    const nodeId = value?.split('\n')[0];
    return nodes.find((n) => n.name === nodeId && n.process.alive);
  };

  before(async () => {
    database = await createTestDatabase();
    await redis.connect();
    media = await startTestMediaServer({ workers: 1 });
    for (const name of ['mc-a', 'mc-b', 'mc-c']) {
      const [httpPort, grpcPort] = [await freePort(), await freePort()];
      const env = {
        ROOMS_NODE_ID: name,
        ROOMS_DB_URL: database.url,
        ROOMS_DB_POOL_SIZE: '4',
        ROOMS_REDIS_URL: testRedisUrl(),
        ROOMS_KEY_PREFIX: keyPrefix,
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: String(httpPort),
        ROOMS_GRPC_HOST: '127.0.0.1',
        ROOMS_GRPC_PORT: String(grpcPort),
        ROOMS_GRPC_TOKEN: 'meeting-e2e-grpc-token-0123456789abcdef',
        ROOMS_ADVERTISE_ADDR: `127.0.0.1:${grpcPort}`,
        ROOMS_LEASE_TTL_MS: String(LEASE_TTL_MS),
        ROOMS_SWEEP_INTERVAL_MS: '500',
        ROOMS_TIMER_TICK_MS: '100',
        ROOMS_MEETING_EMPTY_TTL_MS: String(EMPTY_TTL_MS),
        ROOMS_JWT_SECRET: 'meeting-e2e-secret-0123456789abcdefgh',
        ROOMS_BCRYPT_COST: '4',
        ROOMS_LOG_LEVEL: 'warn',
        ROOMS_MEDIA_EMBEDDED: 'false',
        ROOMS_MEDIA_URL: media.url,
        ROOMS_MEDIA_INTERNAL_TOKEN: TEST_TOKEN,
      };
      nodes.push({
        name,
        process: new ServerProcess(name, env),
        http: `http://127.0.0.1:${httpPort}`,
      });
    }
    await reportingOutput(
      nodes.map((n) => n.process),
      async () => {
        await Promise.all(nodes.map((n) => waitForHealthy(n.process, n.http, 60_000)));
      },
    );
    for (const who of ['host', 'guest']) {
      const creds = { username: `mc_${who}`, password: 'secret123' };
      await call(nodes[0]!, 'POST', '/auth/register', undefined, creds);
      const login = await call(nodes[0]!, 'POST', '/auth/login', undefined, creds);
      tokens[who] = login.body.data.access_token as string;
      ids[who] = login.body.data.user.id as number;
    }
  });
  after(async () => {
    for (const s of sockets) s.close();
    await Promise.all(nodes.map((n) => n.process.stop()));
    await media?.close();
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix).catch(() => 0);
    redis.disconnect();
    await database?.drop();
  });

  it('REST on one node, the socket on another, the owner on a third; the meeting ends after its owner is killed', () =>
    reportingOutput(
      nodes.map((n) => n.process),
      async () => {
        const created = await call(nodes[0]!, 'POST', '/meeting/rooms', 'host', {
          title: '三节点',
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        const code = created.body.data.room.room_code as string;
        const owner = (await ownerOf(code))!;
        assert.ok(owner, 'the meeting has an owner');
        const [rest, ws] = nodes.filter((n) => n !== owner) as [Node, Node];

        const host = await TestClient.connect(
          `${ws.http.replace(/^http/, 'ws')}/ws?token=${tokens.host}`,
        );
        sockets.push(host);
        assert.equal((await host.request('meeting.room.join', { room_code: code })).code, 0);
        const joined = await call(rest, 'POST', `/meeting/rooms/${code}/join`, 'guest', {});
        assert.equal(joined.status, 200, JSON.stringify(joined.body));
        assert.equal(joined.body.data.router_id, created.body.data.router_id, 'one router (S5)');
        const seen = await host.waitFor((f) => f.event === 'meeting.member.joined', 10_000);
        assert.equal((seen.data.participant as { user_id: number }).user_id, ids.guest);
        await call(rest, 'POST', `/meeting/rooms/${code}/chats`, 'guest', { content: '跨三节点' });
        const chat = await host.waitFor((f) => f.event === 'meeting.chat', 10_000);
        assert.equal(chat.data.content, '跨三节点');

        // Everybody leaves: the empty-TTL countdown runs on the owner, which then dies.
        for (const who of ['guest', 'host']) {
          const left = await call(rest, 'POST', `/meeting/rooms/${code}/leave`, who, {});
          assert.equal(left.status, 200, JSON.stringify(left.body));
        }
        const leftAt = Date.now();
        owner.process.child.kill('SIGKILL');
        await owner.process.exited;

        let ended = false;
        const until = leftAt + EMPTY_TTL_MS + LEASE_TTL_MS + 8_000;
        while (!ended && Date.now() < until) {
          const mine = await call(rest, 'GET', '/meeting/rooms/mine?status=2', 'host');
          ended = (mine.body.data?.list ?? []).some(
            (m: { room_code: string; ended_reason: string }) =>
              m.room_code === code && m.ended_reason === 'empty_ttl',
          );
          if (!ended) await sleep(200);
        }
        const took = Date.now() - leftAt;
        assert.ok(ended, `the meeting ended (empty_ttl) on a surviving node (after ${took} ms)`);
        const late = await call(ws, 'POST', `/meeting/rooms/${code}/join`, 'guest', {});
        assert.deepEqual([late.status, late.body.message], [400, '会议已结束']);
      },
    ));

  it('a request id names one request on every node, also after its owner’s kill -9', () =>
    reportingOutput(
      nodes.map((n) => n.process),
      async () => {
        const body = { title: '重用', request_id: 'e2e-create-1' };
        const created = await call(
          nodes.find((n) => n.process.alive)!,
          'POST',
          '/meeting/rooms',
          'host',
          body,
        );
        assert.equal(created.status, 201, JSON.stringify(created.body));
        const code = created.body.data.room.room_code as string;
        const owner = (await ownerOf(code))!;
        const other = nodes.find((n) => n !== owner && n.process.alive)!;
        const chatUnderCreateId = () =>
          call(other, 'POST', `/meeting/rooms/${code}/chats`, 'host', {
            content: 'x',
            request_id: 'e2e-create-1',
          });
        const reused = (r: Answer) =>
          assert.deepEqual(
            [r.status, (r.body as { reason?: string }).reason],
            [409, 'REQUEST_ID_REUSED'],
          );
        reused(await chatUnderCreateId());

        owner.process.child.kill('SIGKILL');
        await owner.process.exited;
        // A client retries while the meeting is between owners (503), as it would.
        let answer = await chatUnderCreateId();
        for (const until = Date.now() + 15_000; answer.status === 503 && Date.now() < until;) {
          await sleep(200);
          answer = await chatUnderCreateId();
        }
        reused(answer);
        reused(await call(other, 'POST', '/meeting/rooms', 'host', { ...body, title: '另一个' }));
        const retried = await call(other, 'POST', '/meeting/rooms', 'host', body);
        assert.equal(retried.status, 201, JSON.stringify(retried.body));
        assert.equal(retried.body.data.room.room_code, code);
        const detail = await call(other, 'GET', `/meeting/rooms/${code}`, 'host');
        assert.equal(detail.body.data.online_count, 1, 'the host is still in its meeting');
        const chats = await call(other, 'GET', `/meeting/rooms/${code}/chats`, 'host');
        assert.deepEqual(chats.body.data.list, []);
        await call(other, 'POST', `/meeting/rooms/${code}/end`, 'host', {});
      },
    ));
});
