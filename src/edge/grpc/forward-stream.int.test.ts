/**
 * The `Forward` stream between nodes, from the outside: a real RoomService server on a free
 * port behind a scripted voice-room API, and the forwarder a node uses. What a forwarded call
 * must keep of a unary one: the request as sent, the forwarded mark, the deadline, every
 * error's kind and reason, one stream for many calls in any order; and what it must do when
 * the owner dies, pauses or is called without the cluster credential. A turn's calls go in one
 * `ForwardBatched` message (bounded in size), and an owner without that method (an earlier
 * version) is still called, on `Forward`, each call running once.
 */
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, it } from 'node:test';
import {
  Metadata,
  Server,
  ServerCredentials,
  credentials,
  type ClientDuplexStream,
  type ServerDuplexStream,
  type ServiceError,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { AppError } from '../../shared/errors.js';
import { errors } from '../../shared/error-codes.js';
import type { CallOptions } from '../../voice-room/api/voice-api.js';
import type { RpcName } from '../../voice-room/api/commands.js';
import {
  GrpcForwarder,
  roomServiceClient,
  startRoomServiceServer,
  type GrpcServerHandle,
} from './room-service.js';
import {
  FORWARD,
  FORWARD_BATCHED,
  MAX_BATCH_BODY_BYTES,
  forwardStreams,
  type ForwardedCall,
  type ForwardedCalls,
} from './forward-stream.js';

const TOKEN = 'cluster-token-for-tests-0123456789abcdef';

interface Received {
  method: RpcName;
  request: Record<string, unknown>;
  options: CallOptions;
}

const servers: (GrpcServerHandle | { close(): Promise<void> })[] = [];
const forwarders: GrpcForwarder[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const f of forwarders.splice(0)) f.close();
  for (const s of servers.splice(0)) await s.close();
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

async function owner(answer: (r: Received) => Promise<unknown>) {
  const received: Received[] = [];
  const server = await startRoomServiceServer(
    {
      call: (method: RpcName, request: unknown, options: CallOptions = {}) => {
        const r = { method, request: request as Record<string, unknown>, options };
        received.push(r);
        return answer(r);
      },
    },
    { host: '127.0.0.1', port: 0, token: TOKEN, tls: null },
  );
  servers.push(server);
  return { addr: `127.0.0.1:${server.port}`, received };
}

/** A node's forwarder (its calls marked forwarded, so they go on the stream). */
function forwarder(timeoutMs = 5_000) {
  const f = new GrpcForwarder({ token: TOKEN, tls: null, timeoutMs });
  forwarders.push(f);
  return f;
}

/**
 * A bare RoomService server with only `implementation` (no credential check), on `port` if
 * given; `stop()` cuts its streams, as a process exiting would.
 */
async function bareOwner(implementation: UntypedServiceImplementation, port = 0) {
  const server = new Server();
  server.addService(roomServiceClient().service, implementation);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  servers.push({ close: () => new Promise<void>((r) => server.tryShutdown(() => r())) });
  return { addr: `127.0.0.1:${bound}`, port: bound, stop: () => server.forceShutdown() };
}

/** A Forward stream opened by hand (no forwarder), with `authorization` if given. */
function rawStream(addr: string, authorization: string | null, method = FORWARD) {
  const Client = roomServiceClient();
  const raw = new Client(addr, credentials.createInsecure()) as unknown as Record<
    string,
    (md: Metadata) => ClientDuplexStream<unknown, unknown>
  > & { close(): void };
  const md = new Metadata();
  if (authorization) md.set('authorization', authorization);
  return { stream: raw[method]!.call(raw, md), close: () => raw.close() };
}

const heartbeat = (i: number) => ({ room_id: `r${i}`, user_id: '1001', request_id: `hb-${i}` });

void describe('Forward stream', () => {
  void it('carries the request as sent, marked forwarded, with the deadline, and the reply back', async () => {
    const o = await owner((r) => Promise.resolve({ room_version: 7, echo: r.request }));
    const deadlineMs = Date.now() + 3_000;
    const reply = await forwarder().call(o.addr, 'RoomHeartbeat', heartbeat(1), deadlineMs);
    assert.deepEqual(reply, { room_version: 7, echo: heartbeat(1) });
    const [got] = o.received;
    assert.equal(got!.method, 'RoomHeartbeat');
    assert.deepEqual(got!.request, heartbeat(1));
    assert.equal(got!.options.forwarded, true);
    // The owner's deadline is the caller's, give or take the trip.
    assert.ok(Math.abs(got!.options.deadlineMs! - deadlineMs) < 1_000);
  });

  void it("carries an edge node's call as a gateway's (not forwarded), with its nulls", async () => {
    const room = { owner_user_id: 1001, seats: [{ user_id: null, mic_session_id: null }] };
    const o = await owner(() => Promise.resolve(room));
    const edge = new GrpcForwarder({ token: TOKEN, tls: null, gateway: true });
    forwarders.push(edge);
    // A unary call would answer '' and 0 for the nulls (protobuf has none), and a string id.
    assert.deepEqual(await edge.call(o.addr, 'GetRoom', { room_id: 'r1' }), room);
    await edge.call(o.addr, 'RoomHeartbeat', heartbeat(1));
    // The node that receives it may forward it once more, to the owner; a node's call, never.
    assert.deepEqual(
      o.received.map((r) => r.options.forwarded),
      [false, false],
    );
    await forwarder().call(o.addr, 'RoomHeartbeat', heartbeat(2));
    assert.equal(o.received[2]!.options.forwarded, true);
  });

  void it('keeps JSON types: a string stays a string, an integer an integer', async () => {
    const o = await owner(() => Promise.resolve({}));
    await forwarder().call(o.addr, 'MicUp', {
      room_id: 'r1',
      user_id: '1001',
      request_id: 'm1',
      seat_index: '1',
    });
    await forwarder().call(o.addr, 'MicUp', {
      room_id: 'r1',
      user_id: '1001',
      request_id: 'm2',
      seat_index: 1,
    });
    assert.deepEqual(
      o.received.map((r) => r.request.seat_index),
      ['1', 1],
    );
  });

  void it('passes every error on with its kind, reason and message', async () => {
    const refusals = [
      errors.NOT_OWNER_NODE('node b'),
      errors.INVALID_ARGUMENT('seat_index: expected an integer'),
      errors.DEADLINE_EXCEEDED('the deadline passed before the call ran'),
      errors.INTERNAL.withCause(new Error('a bug')),
    ];
    let n = 0;
    const o = await owner(() => Promise.reject(refusals[n++]!));
    const f = forwarder();
    for (const refusal of refusals) {
      const error = await f.call(o.addr, 'RoomHeartbeat', heartbeat(n)).then(
        () => assert.fail('no error'),
        (e: unknown) => e as AppError,
      );
      assert.ok(error instanceof AppError);
      assert.deepEqual([error.kind, error.code], [refusal.kind, refusal.code]);
      assert.equal(error.message, refusal.message);
    }
  });

  void it('a command without a request id is refused before it reaches the room', async () => {
    const o = await owner(() => Promise.resolve({}));
    await assert.rejects(forwarder().call(o.addr, 'JoinRoom', { room_id: 'r1', user_id: '1001' }), {
      code: 'INVALID_ARGUMENT',
    });
    assert.equal(o.received.length, 0);
  });

  void it('many calls on one stream, answered out of order, each to its own caller', async () => {
    const o = await owner(
      (r) =>
        new Promise((resolve) =>
          // Later calls answer first.
          setTimeout(
            () => resolve({ room: r.request.room_id }),
            200 - 2 * Number(String(r.request.room_id).slice(1)),
          ),
        ),
    );
    const f = forwarder();
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        f.call(o.addr, 'GetRoom', { room_id: `r${i}`, user_id: '1001' }),
      ),
    );
    assert.deepEqual(
      replies,
      Array.from({ length: 50 }, (_, i) => ({ room: `r${i}` })),
    );
  });

  void it('a call late on arrival never runs; a slow owner times out as OWNER_TIMEOUT', async () => {
    const o = await owner(() => new Promise(() => undefined)); // never answers
    const f = forwarder();
    // Late already at the caller: not even sent.
    await assert.rejects(f.call(o.addr, 'RoomHeartbeat', heartbeat(1), Date.now() - 1), {
      code: 'DEADLINE_EXCEEDED',
    });
    // Late on arrival at the owner (no time left): answered, never run.
    const raw = rawStream(o.addr, `Bearer ${TOKEN}`);
    raw.stream.write({ id: 7, method: 'RoomHeartbeat', body: '{}', timeout_ms: 0 });
    const [answer] = (await once(raw.stream, 'data')) as [{ id: number; error_code: string }];
    assert.deepEqual([Number(answer.id), answer.error_code], [7, 'DEADLINE_EXCEEDED']);
    raw.stream.on('error', () => undefined); // the cancel below ends it with CANCELLED
    raw.stream.cancel();
    raw.close();
    assert.equal(o.received.length, 0);
    await assert.rejects(f.call(o.addr, 'RoomHeartbeat', heartbeat(2), Date.now() + 300), {
      code: 'OWNER_TIMEOUT',
    });
  });

  void it('the owner dying fails the calls in flight as unreachable; the next call opens a new stream', async () => {
    // The owner in its own process, so that it can die for real.
    const child = fork(new URL('./testing/forward-owner.ts', import.meta.url).pathname, [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, FORWARD_TEST_TOKEN: TOKEN },
    });
    children.push(child);
    const [port] = (await once(child, 'message')) as [number];
    const addr = `127.0.0.1:${port}`;
    const f = forwarder();
    assert.deepEqual(await f.call(addr, 'GetRoom', { room_id: 'quick', user_id: '1001' }), {
      ok: 'quick',
    });
    const inFlight = f.call(addr, 'GetRoom', { room_id: 'hang', user_id: '1001' });
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGKILL');
    await assert.rejects(inFlight, { code: 'OWNER_UNREACHABLE' });
    // A new owner on another port answers at once on a new stream.
    const o = await owner((r) => Promise.resolve({ ok: r.request.room_id }));
    assert.deepEqual(await f.call(o.addr, 'GetRoom', { room_id: 'again', user_id: '1001' }), {
      ok: 'again',
    });
    await assert.rejects(f.call(addr, 'GetRoom', { room_id: 'dead', user_id: '1001' }), {
      code: 'OWNER_UNREACHABLE',
    });
  });

  void it('without the cluster credential the stream is refused and nothing runs', async () => {
    const o = await owner(() => Promise.resolve({}));
    const call = {
      id: 1,
      method: 'RoomHeartbeat',
      body: JSON.stringify(heartbeat(1)),
      timeout_ms: 1000,
    };
    for (const authorization of [null, 'Bearer wrong-token-0123456789abcdef012345']) {
      for (const method of [FORWARD, FORWARD_BATCHED]) {
        const { stream, close } = rawStream(o.addr, authorization, method);
        stream.write(method === FORWARD ? call : { calls: [call] });
        const [error] = (await once(stream, 'error')) as [ServiceError];
        assert.equal(error.code, 16, `UNAUTHENTICATED on ${method}`);
        close();
      }
    }
    assert.equal(o.received.length, 0);
  });

  void it("sends a turn's calls in one message, and its settled answers in one back", async () => {
    const messages: number[] = [];
    const { addr } = await bareOwner({
      [FORWARD_BATCHED]: (stream: ServerDuplexStream<ForwardedCalls, unknown>) =>
        stream.on('data', ({ calls }: ForwardedCalls) => {
          messages.push(calls.length);
          const answers = calls.map((c) => ({ id: c.id, body: c.body }));
          stream.write({ answers: answers.map((a) => ({ ...a, error_code: '' })) });
        }),
    });
    const f = forwarder();
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => f.call(addr, 'GetRoom', { room_id: `r${i}` })),
    );
    assert.deepEqual(
      replies,
      Array.from({ length: 40 }, (_, i) => ({ room_id: `r${i}` })),
    );
    assert.deepEqual(messages, [40]);

    // The real owner: 40 calls settled in one turn come back in one message.
    const o = await owner((r) => Promise.resolve({ room: r.request.room_id }));
    const raw = rawStream(o.addr, `Bearer ${TOKEN}`, FORWARD_BATCHED);
    const calls: ForwardedCall[] = Array.from({ length: 40 }, (_, i) => ({
      id: i + 1,
      method: 'GetRoom',
      body: JSON.stringify({ room_id: `r${i}`, user_id: '1001' }),
      timeout_ms: 5_000,
    }));
    raw.stream.write({ calls });
    const [back] = (await once(raw.stream, 'data')) as [
      { answers: { id: number; body: string }[] },
    ];
    assert.deepEqual(
      back.answers.map((a) => [Number(a.id), JSON.parse(a.body) as unknown]),
      calls.map((c, i) => [c.id, { room: `r${i}` }]),
    );
    raw.stream.on('error', () => undefined);
    raw.stream.cancel();
    raw.close();
  });

  void it('sends a message once its bodies pass MAX_BATCH_BODY_BYTES, before the turn ends', async () => {
    const sizes: number[] = [];
    const { addr } = await bareOwner({
      [FORWARD_BATCHED]: (stream: ServerDuplexStream<ForwardedCalls, unknown>) =>
        stream.on('data', ({ calls }: ForwardedCalls) => {
          sizes.push(calls.reduce((n, c) => n + c.body.length, 0));
          stream.write({ answers: calls.map((c) => ({ id: c.id, body: '{}', error_code: '' })) });
        }),
    });
    const f = forwarder();
    const big = 'x'.repeat(Math.floor(MAX_BATCH_BODY_BYTES / 3));
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        f.call(addr, 'GetRoom', { room_id: `r${i}`, user_id: big }),
      ),
    );
    assert.ok(sizes.length >= 3, `${sizes.length} messages`);
    // A message closes once it passes the bound: at most one body over it.
    for (const size of sizes) assert.ok(size < MAX_BATCH_BODY_BYTES + big.length + 100);
    assert.equal(
      sizes.reduce((a, b) => a + b, 0),
      10 * JSON.stringify({ room_id: 'r0', user_id: big }).length,
    );
  });

  void it('calls an owner without ForwardBatched on Forward, each call running once', async () => {
    const runs = new Map<string, number>();
    const older = forwardStreams((_method, request) => {
      const roomId = String((request as { room_id: string }).room_id);
      runs.set(roomId, (runs.get(roomId) ?? 0) + 1);
      return Promise.resolve({ room: roomId });
    });
    const olderOwner = await bareOwner({ [FORWARD]: older.handler }); // an earlier version's owner
    const { addr } = olderOwner;
    const f = forwarder();
    const first = await Promise.all(
      Array.from({ length: 20 }, (_, i) => f.call(addr, 'GetRoom', { room_id: `r${i}` })),
    );
    assert.deepEqual(
      first,
      Array.from({ length: 20 }, (_, i) => ({ room: `r${i}` })),
    );
    // And the calls after them.
    assert.deepEqual(await f.call(addr, 'GetRoom', { room_id: 'later' }), { room: 'later' });
    assert.deepEqual(
      [...runs.values()].every((n) => n === 1),
      true,
      'no call ran twice',
    );
    assert.equal(runs.size, 21);

    // The owner restarts upgraded at the same address: the next stream is ForwardBatched.
    olderOwner.stop();
    await assert.rejects(
      f.call(addr, 'GetRoom', { room_id: 'gone' }, Date.now() + 300),
      (e: AppError) => ['OWNER_UNREACHABLE', 'OWNER_TIMEOUT'].includes(e.code),
    );
    const upgraded = forwardStreams((_method, request) => Promise.resolve(request));
    await bareOwner({ [FORWARD_BATCHED]: upgraded.batchedHandler }, olderOwner.port);
    assert.deepEqual(await f.call(addr, 'GetRoom', { room_id: 'after' }), { room_id: 'after' });
  });
});
