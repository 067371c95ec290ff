/**
 * `room.v1.RoomService` as the trusted internal API: real gRPC servers on free ports, called
 * with grpc-js and with hand-written HTTP/2. Behind each server sits a recording voice-room
 * API, so a test sees whether a refused call reached it (it must not).
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Metadata, credentials, status, type ServiceError } from '@grpc/grpc-js';
import type { AppError } from '../../shared/errors.js';
import { createTestCa, type TestCa } from '../../testing/test-certs.js';
import type { CallOptions } from '../../voice-room/api/voice-api.js';
import type { RpcName } from '../../voice-room/api/commands.js';
import {
  GrpcForwarder,
  roomServiceClient,
  startRoomServiceServer,
  type GrpcServerHandle,
} from './room-service.js';
import type { GrpcTls } from './security.js';
import { rawGrpcCall } from './testing/raw-grpc.js';

const TOKEN = 'cluster-token-for-tests-0123456789abcdef';
const JOIN = { room_id: 'r1', user_id: '1001', request_id: 'join-1' };

interface Received {
  method: RpcName;
  request: Record<string, unknown>;
  options: CallOptions;
}

/** A voice-room API that records what reaches it; `then` decides the answer. */
function recordingApi(
  then: (r: Received) => Promise<unknown> = () => Promise.resolve({ room_version: 1 }),
) {
  const received: Received[] = [];
  return {
    received,
    call: (method: RpcName, request: unknown, options: CallOptions = {}) => {
      const r = { method, request: request as Record<string, unknown>, options };
      received.push(r);
      return then(r);
    },
  };
}

const servers: GrpcServerHandle[] = [];
const clients: GrpcForwarder[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) await s.close();
});

async function serve(api: ReturnType<typeof recordingApi>, tls: GrpcTls | null = null) {
  const server = await startRoomServiceServer(api, {
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
    tls,
  });
  servers.push(server);
  return server;
}
function client(options: { token?: string; tls?: GrpcTls | null; timeoutMs?: number } = {}) {
  const c = new GrpcForwarder({ token: TOKEN, tls: null, markForwarded: false, ...options });
  clients.push(c);
  return c;
}

void describe('RoomService: the cluster credential', () => {
  const refusals: Record<string, Record<string, string | string[]>> = {
    'no metadata at all': {},
    'an empty authorization': { authorization: '' },
    'the token without the Bearer scheme': { authorization: TOKEN },
    'another scheme': { authorization: `Basic ${TOKEN}` },
    'a wrong token of the same length': { authorization: `Bearer ${TOKEN.slice(0, -1)}X` },
    'a prefix of the token': { authorization: `Bearer ${TOKEN.slice(0, 20)}` },
    'the token and more': { authorization: `Bearer ${TOKEN}0` },
    'a much longer value': { authorization: `Bearer ${TOKEN.repeat(50)}` },
    'non-ASCII bytes': {
      authorization: Buffer.from(`Bearer ${TOKEN.slice(0, -2)}é`, 'utf8').toString('latin1'),
    },
    'the token in another header': { 'x-rooms-token': TOKEN, 'x-rooms-forwarded': '1' },
  };

  for (const [label, headers] of Object.entries(refusals)) {
    void it(`refuses ${label} with UNAUTHENTICATED; nothing runs`, async () => {
      const api = recordingApi();
      const { port } = await serve(api);
      for (const [method, request] of [
        ['JoinRoom', JOIN],
        ['GetRoom', { room_id: 'r1' }],
      ] as const) {
        const res = await rawGrpcCall(port, method, request, headers);
        assert.equal(res.code, status.UNAUTHENTICATED, `${method}: ${res.details}`);
        assert.equal(res.reason, 'UNAUTHENTICATED');
      }
      assert.deepEqual(api.received, []);
    });
  }

  void it('refuses a grpc-js client with a wrong token, of any length', async () => {
    const api = recordingApi();
    const { port } = await serve(api);
    for (const token of ['x'.repeat(TOKEN.length), `${TOKEN}x`, 'short']) {
      await assert.rejects(client({ token }).call(`127.0.0.1:${port}`, 'JoinRoom', JOIN), {
        kind: 'unauthenticated',
        code: 'UNAUTHENTICATED',
      });
    }
    assert.deepEqual(api.received, []);
  });

  void it('runs a call with the right token (Bearer, any case), once', async () => {
    const api = recordingApi();
    const { port } = await serve(api);
    const reply = await client().call(`127.0.0.1:${port}`, 'JoinRoom', JOIN);
    assert.deepEqual(reply, { room_version: 1, duplicate: false });
    const raw = await rawGrpcCall(
      port,
      'GetRoom',
      { room_id: 'r1' },
      {
        authorization: `bearer ${TOKEN}`,
      },
    );
    assert.equal(raw.code, status.OK, raw.details);
    assert.deepEqual(
      api.received.map((r) => [r.method, r.request.room_id, r.options.forwarded]),
      [
        ['JoinRoom', 'r1', false],
        ['GetRoom', 'r1', false],
      ],
    );
  });

  void it('a node forwards with the token and the caller deadline; the owner sees both', async () => {
    const owner = recordingApi();
    const ownerAddr = `127.0.0.1:${(await serve(owner)).port}`;
    // The forwarder's own timeout is an hour: the forwarded call must carry the caller's instead.
    const forwarder = new GrpcForwarder({ token: TOKEN, tls: null, timeoutMs: 3_600_000 });
    clients.push(forwarder);
    const edge = recordingApi((r) => forward(forwarder, ownerAddr, r));
    const edgePort = (await serve(edge)).port;
    const deadline = Date.now() + 10_000;
    const reply = await grpcJsCall(edgePort, 'JoinRoom', JOIN, deadline);
    assert.deepEqual(reply, { room_version: 1, duplicate: false });
    assert.equal(owner.received.length, 1);
    const seen = owner.received[0]!;
    assert.equal(seen.options.forwarded, true);
    assert.deepEqual(seen.request, { ...JOIN, app_code: '' });
    // grpc-timeout is relative and rounded: allow a generous second either way.
    const got = seen.options.deadlineMs;
    assert.ok(got !== undefined && Math.abs(got - deadline) < 1_000, `${got} vs ${deadline}`);
  });

  void it('a forwarder with a wrong token is refused by the owner', async () => {
    const owner = recordingApi();
    const ownerAddr = `127.0.0.1:${(await serve(owner)).port}`;
    const rogue = new GrpcForwarder({ token: `${TOKEN.slice(0, -1)}!`, tls: null });
    clients.push(rogue);
    await assert.rejects(rogue.call(ownerAddr, 'JoinRoom', JOIN), { code: 'UNAUTHENTICATED' });
    assert.deepEqual(owner.received, []);
  });
});

void describe('RoomService: deadlines', () => {
  void it('refuses a call whose deadline passed before its handler started; nothing runs', async () => {
    const api = recordingApi();
    const { port } = await serve(api);
    for (const timeout of ['0n', '0m', '1n']) {
      const res = await rawGrpcCall(port, 'JoinRoom', JOIN, {
        authorization: `Bearer ${TOKEN}`,
        'grpc-timeout': timeout,
      });
      assert.equal(res.code, status.DEADLINE_EXCEEDED, `${timeout}: ${res.details}`);
    }
    assert.deepEqual(api.received, []);
  });

  void it('does not forward a call whose deadline passed on the way; the owner sees nothing', async () => {
    const owner = recordingApi();
    const ownerAddr = `127.0.0.1:${(await serve(owner)).port}`;
    const forwarder = new GrpcForwarder({ token: TOKEN, tls: null, timeoutMs: 3_600_000 });
    clients.push(forwarder);
    let forwardResult: Promise<unknown> | undefined;
    const edge = recordingApi(async (r) => {
      // The edge is slow (a busy event loop, a slow lookup): the caller's deadline passes.
      while (Date.now() <= r.options.deadlineMs!) await sleep(5);
      forwardResult = forward(forwarder, ownerAddr, r);
      return forwardResult;
    });
    const edgePort = (await serve(edge)).port;
    // Room for the handler to start first on a busy machine (a call whose deadline passed
    // before its handler started is refused without running: the test above).
    await assert.rejects(grpcJsCall(edgePort, 'JoinRoom', JOIN, Date.now() + 500), {
      code: status.DEADLINE_EXCEEDED,
    });
    await eventually(() => assert.ok(forwardResult));
    await assert.rejects(forwardResult!, { kind: 'unavailable', code: 'DEADLINE_EXCEEDED' });
    assert.deepEqual(owner.received, []);
  });

  void it('a call without a deadline is forwarded with the forward timeout', async () => {
    const owner = recordingApi();
    const ownerAddr = `127.0.0.1:${(await serve(owner)).port}`;
    const forwarder = new GrpcForwarder({ token: TOKEN, tls: null, timeoutMs: 60_000 });
    clients.push(forwarder);
    const before = Date.now();
    await forwarder.call(ownerAddr, 'GetRoom', { room_id: 'r1' });
    const got = owner.received[0]?.options.deadlineMs;
    assert.ok(
      got !== undefined && got >= before + 59_000 && got <= Date.now() + 61_000,
      String(got),
    );
  });
});

void describe('RoomService: commands need a request_id', () => {
  const commands: [RpcName, object][] = [
    ['JoinRoom', { room_id: 'r1', user_id: '1001' }],
    ['CreateRoom', { owner_user_id: '1001', title: 't', seat_count: 2 }],
    ['MicUp', { room_id: 'r1', user_id: '1001', seat_index: 0 }],
    [
      'SendGift',
      {
        room_id: 'r1',
        sender_user_id: '1001',
        receiver_user_ids: ['1002'],
        gift_id: 'g',
        count: 1,
      },
    ],
    ['RoomHeartbeat', { room_id: 'r1', user_id: '1001' }],
  ];

  void it('refuses a command with an empty or missing request_id with INVALID_ARGUMENT', async () => {
    const api = recordingApi();
    const { port } = await serve(api);
    for (const [method, request] of commands) {
      for (const r of [request, { ...request, request_id: '' }]) {
        await assert.rejects(client().call(`127.0.0.1:${port}`, method, r), (e: AppError) => {
          assert.deepEqual(
            [e.kind, e.code, e.message],
            ['validation', 'INVALID_ARGUMENT', 'request_id is required'],
          );
          return true;
        });
      }
    }
    assert.deepEqual(api.received, []);
  });

  void it('runs the queries without one', async () => {
    const api = recordingApi(() => Promise.resolve({}));
    const { port } = await serve(api);
    await client().call(`127.0.0.1:${port}`, 'GetRoom', { room_id: 'r1' });
    await client().call(`127.0.0.1:${port}`, 'CheckRoomAccess', { room_id: 'r1', user_id: '1001' });
    assert.deepEqual(
      api.received.map((r) => r.method),
      ['GetRoom', 'CheckRoomAccess'],
    );
  });
});

void describe('RoomService: mutual TLS', () => {
  let ca: TestCa;
  let other: TestCa;
  let serverTls: GrpcTls;
  let clientTls: GrpcTls;

  before(() => {
    ca = createTestCa('cluster');
    other = createTestCa('other');
    serverTls = { ca: ca.ca, ...pick(ca.issue('node-a')) };
    clientTls = { ca: ca.ca, ...pick(ca.issue('node-b')) };
  });
  after(() => {
    ca.remove();
    other.remove();
  });

  void it('answers a client with a certificate of the cluster CA and the token', async () => {
    const api = recordingApi();
    const { port } = await serve(api, serverTls);
    const reply = await client({ tls: clientTls }).call(`127.0.0.1:${port}`, 'JoinRoom', JOIN);
    assert.deepEqual(reply, { room_version: 1, duplicate: false });
    assert.equal(api.received.length, 1);
  });

  void it('refuses plaintext, no client certificate, a foreign certificate, or no token', async () => {
    const api = recordingApi();
    const { port } = await serve(api, serverTls);
    const addr = `127.0.0.1:${port}`;
    const foreign = { ca: ca.ca, ...pick(other.issue('intruder')) };
    for (const [label, c] of [
      ['plaintext', client({ timeoutMs: 3_000 })],
      ['a foreign certificate', client({ tls: foreign, timeoutMs: 3_000 })],
    ] as const) {
      await assert.rejects(c.call(addr, 'JoinRoom', JOIN), { kind: 'unavailable' }, label);
    }
    // A TLS client that trusts the CA but presents no certificate of its own.
    await assert.rejects(
      grpcJsCall(port, 'JoinRoom', JOIN, Date.now() + 3_000, credentials.createSsl(ca.ca)),
      (e: ServiceError) => e.code === status.UNAVAILABLE,
    );
    // The certificate alone is not enough: the token is still required.
    await assert.rejects(
      client({ tls: clientTls, token: 'not-the-cluster-token-0123456789abcdef' }).call(
        addr,
        'JoinRoom',
        JOIN,
      ),
      { code: 'UNAUTHENTICATED' },
    );
    assert.deepEqual(api.received, []);
  });
});

const pick = (c: { cert: Buffer; key: Buffer }) => ({ cert: c.cert, key: c.key });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function eventually(check: () => void, ms = 5_000) {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return check();
    } catch (error) {
      if (Date.now() > until) throw error;
      await sleep(10);
    }
  }
}

/** What a node's VoiceRoomApi does for a room owned elsewhere: forward with the deadline. */
function forward(f: GrpcForwarder, addr: string, r: Received) {
  return f.call(addr, r.method, r.request, r.options.deadlineMs);
}

/** A plain grpc-js call with the token and a deadline of the test's choosing. */
function grpcJsCall(
  port: number,
  method: RpcName,
  request: object,
  deadline: number,
  channel = credentials.createInsecure(),
) {
  const Ctor = roomServiceClient();
  const c = new Ctor(`127.0.0.1:${port}`, channel) as unknown as Record<
    string,
    (req: object, md: Metadata, o: object, cb: (e: ServiceError | null, r: unknown) => void) => void
  > & { close(): void };
  const md = new Metadata();
  md.set('authorization', `Bearer ${TOKEN}`);
  return new Promise((resolve, reject) =>
    c[method]!.call(c, request, md, { deadline }, (err, reply) => {
      c.close();
      if (err) reject(err);
      else resolve(reply);
    }),
  );
}
