/**
 * Voice rooms on a cluster of real node processes (MariaDB + Redis), over real gRPC:
 * forwarding to the owner, recursion protection, drain handover, takeover after kill -9,
 * and a gift retried across the owner change charged once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { status } from '@grpc/grpc-js';
import { Redis } from 'ioredis';
import { AppError } from '../../shared/errors.js';
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
import type { RpcName } from '../../voice-room/api/commands.js';
import { GrpcForwarder } from './room-service.js';
import { rawGrpcCall } from './testing/raw-grpc.js';

const skip = await clusterSkipReason();
const ADMIN = 'cluster-admin-token-0123456789';
const GRPC_TOKEN = 'cluster-grpc-token-0123456789abcdef';
const LEASE_TTL_MS = 2_000;

interface Node {
  readonly name: string;
  readonly process: ServerProcess;
  readonly grpc: string;
  readonly http: string;
}

describe(
  'voice rooms on a 3-node cluster over gRPC',
  { skip, timeout: TEST_TIMEOUT_MS * 2 },
  () => {
    let database: TestDatabase;
    const keyPrefix = testKeyPrefix();
    const redis = new Redis(testRedisUrl(), { lazyConnect: true });
    const security = { token: GRPC_TOKEN, tls: null };
    const client = new GrpcForwarder({ ...security, timeoutMs: 5_000, markForwarded: false });
    const forwarder = new GrpcForwarder({ ...security, timeoutMs: 5_000 }); // marks calls as forwarded
    const nodes: Node[] = [];

    const call = (node: Node, method: RpcName, req: object) => client.call(node.grpc, method, req);
    const ownerOf = async (roomId: string): Promise<Node | undefined> => {
      const value = await redis.get(`${keyPrefix}lease:default\u0000${roomId}`);
      const nodeId = value?.split('\n')[0];
      return nodes.find((n) => n.name === nodeId && n.process.alive);
    };
    /** Retries while the room is between owners (UNAVAILABLE), as a client would. */
    const eventually = async <T>(f: () => Promise<T>, ms = 15_000): Promise<T> => {
      const until = Date.now() + ms;
      for (;;) {
        try {
          return await f();
        } catch (error) {
          if (!(error instanceof AppError && error.kind === 'unavailable') || Date.now() > until)
            throw error;
          await sleep(100);
        }
      }
    };

    before(async () => {
      database = await createTestDatabase();
      await redis.connect();
      for (const name of ['node-a', 'node-b', 'node-c']) {
        const [httpPort, grpcPort] = [await freePort(), await freePort()];
        const env = {
          ROOMS_NODE_ID: name,
          ROOMS_DB_URL: database.url,
          ROOMS_REDIS_URL: testRedisUrl(),
          ROOMS_KEY_PREFIX: keyPrefix,
          ROOMS_HTTP_HOST: '127.0.0.1',
          ROOMS_HTTP_PORT: String(httpPort),
          ROOMS_GRPC_HOST: '127.0.0.1',
          ROOMS_GRPC_PORT: String(grpcPort),
          ROOMS_GRPC_TOKEN: GRPC_TOKEN,
          ROOMS_ADVERTISE_ADDR: `127.0.0.1:${grpcPort}`,
          ROOMS_LEASE_TTL_MS: String(LEASE_TTL_MS),
          ROOMS_JWT_SECRET: 'cluster-test-secret-0123456789abcdef',
          ROOMS_ADMIN_TOKEN: ADMIN,
          ROOMS_LOG_LEVEL: 'warn',
          ROOMS_MEDIA_EMBEDDED: 'false', // media has its own tests
          ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
        };
        nodes.push({
          name,
          process: new ServerProcess(name, env),
          grpc: `127.0.0.1:${grpcPort}`,
          http: `http://127.0.0.1:${httpPort}`,
        });
      }
      await reportingOutput(
        nodes.map((n) => n.process),
        async () => {
          await Promise.all(nodes.map((n) => waitForHealthy(n.process, n.http, 60_000)));
        },
      );
    });

    after(async () => {
      await Promise.all(nodes.map((n) => n.process.stop()));
      client.close();
      forwarder.close();
      await deleteKeysWithPrefix(testRedisUrl(), keyPrefix).catch(() => 0);
      redis.disconnect();
      await database?.drop();
    });

    const withOutput = (body: () => Promise<void>) =>
      reportingOutput(
        nodes.map((n) => n.process),
        body,
      );

    it('serves a room from any node by forwarding to its one owner', () =>
      withOutput(async () => {
        const [a, b, c] = nodes as [Node, Node, Node];
        const created = (await call(a, 'CreateRoom', {
          request_id: 'fwd-create',
          owner_user_id: '1001',
          title: 'forwarded',
          seat_count: 4,
        })) as { room_id: string };
        const roomId = created.room_id;
        for (const [i, node] of [a, b, c].entries()) {
          await call(node, 'JoinRoom', {
            room_id: roomId,
            user_id: String(1001 + i),
            request_id: `join-${i}`,
          });
        }
        const owner = await ownerOf(roomId);
        assert.ok(owner, 'one node owns the room');
        const nonOwner = nodes.find((n) => n !== owner)!;
        const viaNonOwner = (await call(nonOwner, 'GetRoom', { room_id: roomId })) as {
          online_count: number;
        };
        assert.equal(viaNonOwner.online_count, 3);
        // A forwarded call that lands on a non-owner is refused, never forwarded again.
        await assert.rejects(forwarder.call(nonOwner.grpc, 'GetRoom', { room_id: roomId }), {
          kind: 'unavailable',
          code: 'NOT_OWNER_NODE',
        });
        // Domain errors cross the forward with their reason.
        await assert.rejects(
          call(nonOwner, 'MicUp', {
            room_id: roomId,
            user_id: '1002',
            seat_index: 9,
            request_id: 'fwd-mic-up-9',
          }),
          {
            kind: 'not_found',
            code: 'SEAT_NOT_FOUND',
          },
        );
      }));

    it('refuses callers without the cluster token on every node; nothing is created', () =>
      withOutput(async () => {
        const wrong = 'not-the-cluster-token-0123456789abcdef';
        const rogues = [
          new GrpcForwarder({ token: wrong, tls: null, markForwarded: false }),
          new GrpcForwarder({ token: wrong, tls: null }), // posing as a node
        ];
        const create = {
          room_id: 'rogue-room',
          request_id: 'rogue-create',
          owner_user_id: '1009',
          title: 'rogue',
          seat_count: 2,
        };
        try {
          for (const node of nodes) {
            for (const rogue of rogues) {
              await assert.rejects(rogue.call(node.grpc, 'CreateRoom', create), {
                kind: 'unauthenticated',
                code: 'UNAUTHENTICATED',
              });
            }
            const port = Number(node.grpc.split(':')[1]);
            const bare = await rawGrpcCall(port, 'CreateRoom', create);
            assert.equal(bare.code, status.UNAUTHENTICATED, bare.details);
          }
        } finally {
          for (const rogue of rogues) rogue.close();
        }
        await assert.rejects(call(nodes[0]!, 'GetRoom', { room_id: 'rogue-room' }), {
          code: 'ROOM_NOT_FOUND',
        });
      }));

    it('a command that sat in a paused node and arrives after its retry was refused never commits', () =>
      withOutput(async () => {
        const hasty = new GrpcForwarder({ ...security, timeoutMs: 500, markForwarded: false });
        try {
          const { room_id: roomId } = (await call(nodes[0]!, 'CreateRoom', {
            request_id: 'late-create',
            owner_user_id: '1001',
            title: 'late copy',
            seat_count: 4,
          })) as { room_id: string };
          for (const u of ['1001', '1002']) {
            await call(nodes[0]!, 'JoinRoom', {
              room_id: roomId,
              user_id: u,
              request_id: `late-j-${u}`,
            });
          }
          await call(nodes[0]!, 'MicUp', {
            room_id: roomId,
            user_id: '1001',
            seat_index: 0,
            request_id: 'late-up-1',
          });
          const owner = (await ownerOf(roomId))!;
          const paused = nodes.find((n) => n !== owner && n.process.alive)!;
          const change = {
            room_id: roomId,
            user_id: '1001',
            seat_index: 1,
            request_id: 'late-change',
          };
          paused.process.child.kill('SIGSTOP');
          try {
            // The caller gives up while the request sits in the paused node's socket …
            await assert.rejects(hasty.call(paused.grpc, 'ChangeMicSeat', change));
            // … takes seat 1 for someone else, retries on the owner and is refused …
            await call(owner, 'MicUp', {
              room_id: roomId,
              user_id: '1002',
              seat_index: 1,
              request_id: 'late-up-2',
            });
            await assert.rejects(call(owner, 'ChangeMicSeat', change), { code: 'SEAT_OCCUPIED' });
            // … and the seat is free again when the paused node wakes and forwards its copy.
            await call(owner, 'MicDown', {
              room_id: roomId,
              user_id: '1002',
              request_id: 'late-down-2',
            });
          } finally {
            paused.process.child.kill('SIGCONT');
          }
          const before = (await call(owner, 'GetRoom', { room_id: roomId })) as {
            room_version: number;
          };
          await sleep(2_000);
          await assert.rejects(
            eventually(() => call(paused, 'ChangeMicSeat', change)),
            {
              code: 'SEAT_OCCUPIED',
            },
          );
          const room = (await call(owner, 'GetRoom', { room_id: roomId })) as {
            room_version: number;
            seats: { seat_index: number; user_id: string | null }[];
          };
          assert.equal(room.room_version, before.room_version, 'the late copy committed nothing');
          assert.deepEqual(
            room.seats.slice(0, 2).map((seat) => seat.user_id || null), // '' on the wire
            ['1001', null], // user ids over gRPC: decimal strings
          );
        } finally {
          hasty.close();
        }
      }));

    it('a drained owner releases its rooms: the lease is gone before any TTL', () =>
      withOutput(async () => {
        const entry = nodes.find((n) => n.process.alive)!;
        const { room_id: roomId } = (await call(entry, 'CreateRoom', {
          request_id: 'drain-create',
          owner_user_id: '1001',
          title: 'drain',
          seat_count: 2,
        })) as { room_id: string };
        await call(entry, 'JoinRoom', {
          room_id: roomId,
          user_id: '1001',
          request_id: 'drain-join',
        });
        const owner = (await ownerOf(roomId))!;
        await owner.process.stop();
        assert.equal((await owner.process.exited).code, 0);
        // Released by the drain (an unreleased lease would still be there for the TTL).
        assert.equal(await redis.exists(`${keyPrefix}lease:default\u0000${roomId}`), 0);
        assert.equal(await redis.exists(`${keyPrefix}room:node:${owner.name}`), 0);
        const survivor = nodes.find((n) => n.process.alive)!;
        const room = (await call(survivor, 'GetRoom', { room_id: roomId })) as {
          online_count: number;
        };
        assert.equal(room.online_count, 1);
      }));

    it('after kill -9 of the owner another node serves the room, and a retried gift is charged once', () =>
      withOutput(async () => {
        const alive = () => nodes.filter((n) => n.process.alive);
        const entry = alive()[0]!;
        const admin = (path: string, method: string, body: object) =>
          fetch(`${entry.http}/api/v1/admin${path}`, {
            method,
            headers: { 'content-type': 'application/json', 'x-admin-token': ADMIN },
            body: JSON.stringify(body),
          }).then((r) => r.json() as Promise<{ code: number }>);
        assert.equal((await admin('/gifts/star', 'PUT', { name: 'Star', price: 7 })).code, 0);
        // Account ids: decimal text over gRPC, a JSON number in the admin body.
        const [payer, fan] = ['1101', '1102'];
        assert.equal(
          (
            await admin('/wallets/topup', 'POST', {
              user_id: Number(payer),
              amount: 50,
              request_id: 'k-top',
            })
          ).code,
          0,
        );
        const { room_id: roomId } = (await call(entry, 'CreateRoom', {
          request_id: 'kill-create',
          owner_user_id: payer,
          title: 'kill',
          seat_count: 2,
        })) as { room_id: string };
        for (const u of [payer, fan]) {
          await call(entry, 'JoinRoom', {
            room_id: roomId,
            user_id: u,
            request_id: `kill-join-${u}`,
          });
        }
        const gift = {
          room_id: roomId,
          request_id: 'kill-gift',
          sender_user_id: payer,
          receiver_user_ids: [fan],
          gift_id: 'star',
          count: 3,
        };
        const first = (await call(entry, 'SendGift', gift)) as {
          room_version: number;
          balance: number;
        };
        assert.equal(first.balance, 29);
        // A request id names one request, on the owner and on a node that forwards to it.
        const reused = { kind: 'conflict', code: 'REQUEST_ID_REUSED' };
        const owner = (await ownerOf(roomId))!;
        const notOwner = alive().find((n) => n !== owner)!;
        const leaveUnderJoinId = { room_id: roomId, user_id: fan, request_id: `kill-join-${fan}` };
        await assert.rejects(call(notOwner, 'LeaveRoom', leaveUnderJoinId), reused);

        owner.process.child.kill('SIGKILL');
        await owner.process.exited;
        const survivor = alive()[0]!;
        const retried = (await eventually(() => call(survivor, 'SendGift', gift))) as {
          room_version: number;
          duplicate: boolean;
          balance: number;
        };
        assert.deepEqual(
          [retried.duplicate, retried.room_version, retried.balance],
          [true, first.room_version, 29],
        );
        // After the kill the new owner knows the first requests from SQL only.
        await assert.rejects(call(survivor, 'SendGift', { ...gift, count: 4 }), reused);
        await assert.rejects(
          call(survivor, 'MicUp', { ...leaveUnderJoinId, seat_index: 0 }),
          reused,
        );
        const room = (await call(survivor, 'GetRoom', { room_id: roomId })) as {
          online_count: number;
          room_version: number;
        };
        assert.deepEqual([room.online_count, room.room_version], [2, first.room_version]);
      }));
  },
);
