/**
 * The hub in one process: a real cell host (SQLite) publishing its commits through the
 * in-process bus, a real HTTP server and real WebSocket clients on loopback.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { MemoryRealtimeBus } from '../../adapters/memory/memory-bus.js';
import {
  silentLogger,
  sqliteMemoryBackend,
  startHost,
  type TestBackend,
  type TestHost,
} from '../../cell/testing/harness.js';
import { room, runLocal } from '../../cell/testing/routing.js';
import { roomChannel } from '../../realtime/bus.js';
import { RealtimePublisher } from '../../realtime/publisher.js';
import { WebSocket } from 'ws';
import { z } from 'zod';
import { WsHub, type CanFollow, type HubOptions } from './hub.js';
import { PING_SLICE } from './keep-alive.js';
import { TestClient, testTokens } from './testing/ws-client.js';
import { wsEvent } from './ws-declarations.js';

/** A test-only event that takes and answers any object. */
const testEvent = (event: string) =>
  wsEvent({
    event,
    summary: 'test',
    payload: z.looseObject({ fail: z.boolean().optional() }),
    ack: z.looseObject({}),
    reasons: [],
  });

const tokens = testTokens();

void describe('WebSocket hub', () => {
  let backend: TestBackend;
  let owner: TestHost;
  const bus = new MemoryRealtimeBus();
  const publisher = new RealtimePublisher({ bus, logger: silentLogger });
  const hubs: { hub: WsHub; server: Server }[] = [];
  const clients: TestClient[] = [];
  let canFollow: CanFollow = () => Promise.resolve(true);
  const serverSockets = new Set<Socket>();
  let roomSeq = 0;
  const freshRoom = () => room(`ws-${++roomSeq}`);

  const startHub = async (options: Partial<HubOptions> = {}) => {
    const hub = new WsHub(
      { maxBufferedBytes: 256 * 1024, pingIntervalMs: 60_000, ...options },
      {
        bus,
        authenticate: tokens.authenticate,
        canFollow: (user, key) => canFollow(user, key),
        logger: silentLogger,
      },
    );
    const server = createServer();
    server.on('connection', (socket: Socket) => serverSockets.add(socket));
    hub.attach(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    hubs.push({ hub, server });
    const port = (server.address() as AddressInfo).port;
    return {
      hub,
      connect: async (token: string, query = '') => {
        const client = await TestClient.connect(
          `ws://127.0.0.1:${port}/ws?token=${encodeURIComponent(token)}${query}`,
        );
        clients.push(client);
        return client;
      },
    };
  };
  const add = (key = freshRoom()) => runLocal(owner.host, key, { type: 'Add', amount: 1 });
  const roomEvents = (client: TestClient, key: { roomId: string }) =>
    client.events('Added').filter((f) => f.data.room_id === key.roomId);

  before(async () => {
    backend = await sqliteMemoryBackend();
    owner = await startHost(backend, { onCommitted: (b) => publisher.onCommitted(b) });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const { hub, server } of hubs.splice(0)) {
      await hub.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    canFollow = () => Promise.resolve(true);
  });
  after(async () => {
    await owner.kill();
    await bus.close();
    await backend.close();
  });

  void it('closes the connection with 4001 for a missing or bad token', async () => {
    const { connect } = await startHub();
    for (const token of [
      '',
      'not-a-jwt',
      await testTokens('another-secret-of-32-bytes-or-more').sign('1'),
    ]) {
      const client = await connect(token);
      assert.deepEqual(await client.waitClosed(), { code: 4001, reason: 'unauthorized' });
    }
  });

  void it('pushes a followed room’s events in order, each with room_version and prev_room_version', async () => {
    const { connect } = await startHub();
    const key = freshRoom();
    await add(key); // v1, before anyone follows
    const client = await connect(await tokens.sign('7'));
    const ack = await client.request('room.subscribe', { room_id: key.roomId });
    assert.deepEqual(
      [ack.code, ack.seq, ack.data],
      [0, 1, { app_code: 'default', room_id: key.roomId }],
    );
    for (let i = 0; i < 5; i++) await add(key);
    await client.until(() => client.events('Added').length === 5);
    const frames = client.events('Added');
    assert.deepEqual(
      frames.map((f) => [f.data.room_version, f.data.prev_room_version]),
      [
        [2, 1],
        [3, 2],
        [4, 3],
        [5, 4],
        [6, 5],
      ],
    );
    assert.ok(
      frames.every((f) => f.code === 0 && f.data.room_id === key.roomId && f.data.amount === 1),
      'frame body',
    );
    assert.ok(!Number.isNaN(Date.parse(frames[0]!.time)), 'time is ISO 8601');
    assert.deepEqual(
      frames.slice(1).map((f) => f.data.prev_event_id),
      frames.slice(0, -1).map((f) => f.data.event_id),
    );

    const unsub = await client.request('room.unsubscribe', { room_id: key.roomId });
    assert.equal(unsub.code, 0);
    // A room it still follows, committed after: its frame comes after any of the first's.
    const witness = freshRoom();
    assert.equal((await client.request('room.subscribe', { room_id: witness.roomId })).code, 0);
    await add(key);
    await add(witness);
    await client.until(() => roomEvents(client, witness).length === 1);
    assert.equal(roomEvents(client, key).length, 5, 'a frame arrived after room.unsubscribe');
  });

  void it('under a steady stream sends the frames of a coalescing window in one write per socket, in order', async () => {
    const { connect } = await startHub({ coalesceMs: 1_000 });
    const key = freshRoom();
    await add(key);
    const client = await connect(await tokens.sign('7'));
    await client.request('room.subscribe', { room_id: key.roomId });
    await add(key); // leaves at once: nothing was flushed before
    await client.until(() => client.events('Added').length === 1);
    // Count the server side's writes to this socket from now on.
    const [serverSocket] = [...serverSockets].filter((s) => !s.destroyed).slice(-1);
    let writes = 0;
    const socket = serverSocket as unknown as {
      _write: (...args: unknown[]) => void;
      _writev: (...args: unknown[]) => void;
    };
    const [write, writev] = [socket._write.bind(socket), socket._writev.bind(socket)];
    socket._write = (...args) => (writes++, write(...args));
    socket._writev = (...args) => (writes++, writev(...args));
    // Three frames of three commits, in separate turns of the event loop, inside the window.
    for (let i = 0; i < 3; i++) {
      await add(key);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await client.until(() => client.events('Added').length === 4);
    assert.equal(writes, 1, 'the window’s three frames left in one write');
    assert.deepEqual(
      client.events('Added').map((f) => f.data.room_version),
      [2, 3, 4, 5],
    );
  });

  void it('ACKs refusals with code -1 and the reason: not in the room, another app, bad request', async () => {
    const { connect } = await startHub();
    const key = freshRoom();
    canFollow = (user, k) => Promise.resolve(user.userId === '1' && k.roomId === key.roomId);
    const outsider = await connect(await tokens.sign('2'));
    const refused = await outsider.request('room.subscribe', { room_id: key.roomId });
    assert.deepEqual(
      [refused.code, refused.message, refused.reason],
      [-1, '你当前未在房间中', 'NOT_IN_ROOM_WS'],
    );
    const member = await connect(await tokens.sign('1'));
    const other = await member.request('room.subscribe', { room_id: key.roomId, app_code: 'x' });
    assert.deepEqual([other.code, other.reason], [-1, 'APP_MISMATCH']);
    const bad = await member.request('room.subscribe', {});
    assert.deepEqual([bad.code, bad.reason], [-1, 'BAD_REQUEST']);
    // Unknown events are dropped without an answer (the seed's whitelist rule).
    member.ws.send(JSON.stringify({ event: 'meeting.fake', seq: 9, data: {} }));
    const ok = await member.request('room.subscribe', { room_id: key.roomId });
    assert.equal(ok.code, 0);
    await add(key);
    await member.waitFor((f) => f.event === 'Added');
    assert.equal(outsider.events('Added').length, 0);
    assert.ok(!member.frames.some((f) => f.event === 'meeting.fake.ack'), 'unknown event answered');
  });

  void it('delivers a targeted message to every socket of that user, and can stop their room feed', async () => {
    const { connect } = await startHub();
    const key = freshRoom();
    const [a1, a2, b] = await Promise.all([
      tokens.sign('10').then(connect),
      tokens.sign('10').then(connect),
      tokens.sign('11').then(connect),
    ]);
    for (const c of [a1, a2, b])
      assert.equal((await c.request('room.subscribe', { room_id: key.roomId })).code, 0);
    publisher.toUser('default', '10', 'notice', { text: 'hi' });
    await a1.waitFor((f) => f.event === 'notice');
    await a2.waitFor((f) => f.event === 'notice');
    // A kicked-style message: the frame, then no more room events for that user.
    const message = {
      frame: {
        event: 'room.kicked',
        data: { room_id: key.roomId },
        code: 0,
        time: new Date().toISOString(),
      },
      unfollow: { app_code: 'default', room_id: key.roomId },
    };
    await bus.publish('rt:user:default:10', JSON.stringify(message));
    await a1.waitFor((f) => f.event === 'room.kicked');
    // Every socket also follows a witness room, committed after: its frame comes last.
    const witness = freshRoom();
    for (const c of [a1, a2, b])
      assert.equal((await c.request('room.subscribe', { room_id: witness.roomId })).code, 0);
    await add(key);
    await add(witness);
    for (const c of [a1, a2, b]) await c.until(() => roomEvents(c, witness).length === 1);
    assert.equal(roomEvents(b, key).length, 1);
    assert.equal(b.events('notice').length, 0);
    assert.equal(roomEvents(a1, key).length + roomEvents(a2, key).length, 0);
  });

  void it('closes a client that stops reading (4008) without delaying the others', async () => {
    const { hub, connect } = await startHub({ maxBufferedBytes: 256 * 1024 });
    const key = freshRoom();
    const [slow, fast] = await Promise.all([
      tokens.sign('20').then(connect),
      tokens.sign('21').then(connect),
    ]);
    for (const c of [slow, fast]) await c.request('room.subscribe', { room_id: key.roomId });
    slow.losePath();
    // 400 frames of 32 KiB: far more than the kernel buffers plus the 256 KiB allowance.
    const filler = 'x'.repeat(32 * 1024);
    const started = Date.now();
    for (let i = 0; i < 400; i++) {
      const frame = { event: 'big', data: { i, filler }, code: 0, time: new Date().toISOString() };
      await bus.publish(roomChannel(key), JSON.stringify(frame));
    }
    await fast.until(() => fast.events('big').length === 400, 10_000);
    const elapsed = Date.now() - started;
    assert.deepEqual(
      fast.events('big').map((f) => f.data.i),
      Array.from({ length: 400 }, (_, i) => i),
    );
    assert.ok(elapsed < 5_000, `the fast client waited ${elapsed} ms`);
    await fast.until(() => hub.connectionCount === 1, 5_000);
    const closed = await hub.metrics.closed.get();
    assert.equal(closed.values.find((v) => v.labels.reason === 'slow_consumer')?.value, 1);
    // The room itself never waited either.
    const t0 = Date.now();
    await add(key);
    assert.ok(Date.now() - t0 < 1_000, 'a commit waited for a socket');
  });

  void it('closes a socket that bursts 10,000 frames with 4029 and keeps serving the others', async () => {
    const { hub, connect } = await startHub();
    const key = freshRoom();
    const [flooder, bystander] = await Promise.all([
      tokens.sign('50').then(connect),
      tokens.sign('51').then(connect),
    ]);
    for (let i = 0; i < 10_000; i++) {
      flooder.ws.send(
        JSON.stringify({ event: 'room.subscribe', seq: i + 1, data: { room_id: key.roomId } }),
      );
    }
    const closed = await flooder.waitClosed(10_000);
    assert.equal(closed.code, 4029);
    assert.match(closed.reason, /rate limited/);
    // Its budget (a burst of 100) was all it got answered.
    assert.ok(
      flooder.events('room.subscribe.ack').length <= 100,
      `${flooder.events('room.subscribe.ack').length} acks`,
    );
    const ack = await bystander.request('room.subscribe', { room_id: key.roomId });
    assert.equal(ack.code, 0);
    await add(key);
    await bystander.waitFor((f) => f.event === 'Added');
    const metric = await hub.metrics.closed.get();
    assert.equal(metric.values.find((v) => v.labels.reason === 'rate_limited')?.value, 1);
  });

  void it('handles at most maxInFlight requests of a socket at once; past the waiting line, 4029', async () => {
    const frames = { ratePerSecond: 1_000, burst: 6, maxInFlight: 2 };
    const { hub, connect } = await startHub({ frames });
    const pending: (() => void)[] = [];
    hub.handle(
      testEvent('test.slow'),
      () => new Promise((resolve) => pending.push(() => resolve({}))),
    );
    const client = await connect(await tokens.sign('52'));
    const send = async (seq: number) => {
      client.ws.send(JSON.stringify({ event: 'test.slow', seq }));
      await new Promise((resolve) => setTimeout(resolve, 10)); // the bucket refills meanwhile
    };
    for (let seq = 1; seq <= 8; seq++) await send(seq); // 2 handled, 6 waiting
    await client.until(() => pending.length === 2);
    assert.equal(pending.length, 2, 'more than maxInFlight handlers ran');
    assert.equal(client.closed, null);
    pending.shift()!(); // one answered: the next waiting one starts
    await client.until(() => pending.length === 2 && client.events('test.slow.ack').length === 1);
    await send(9); // the line is full again (6 waiting)
    await send(10);
    const closed = await client.waitClosed();
    assert.deepEqual(closed, { code: 4029, reason: 'rate limited: too many requests at once' });
    for (const resolve of pending) resolve();
  });

  void it('refuses an ACK off its declared schema (REPLY_MISMATCH) instead of sending it', async () => {
    const { hub, connect } = await startHub();
    hub.handle(
      wsEvent({
        event: 'test.typed',
        summary: 'test',
        payload: z.object({}),
        ack: z.strictObject({ n: z.int() }),
        reasons: [],
      }),
      // A handler bug a type cast hides: the wire must not carry it.
      () => Promise.resolve({ n: 'one' } as unknown as { n: number }),
    );
    const client = await connect(await tokens.sign('54'));
    const ack = await client.request('test.typed', {});
    assert.deepEqual([ack.code, ack.reason, ack.data], [-1, 'REPLY_MISMATCH', {}]);
  });

  void it('never closes a client within its budget', async () => {
    const { hub, connect } = await startHub({
      frames: { ratePerSecond: 50, burst: 100, maxInFlight: 16 },
    });
    let answered = 0;
    hub.handle(testEvent('test.echo'), () => Promise.resolve({ n: ++answered }));
    const client = await connect(await tokens.sign('53'));
    // A burst of 100 at once (the whole bucket): handled 16 at a time, the rest wait.
    const acks = [];
    for (let i = 0; i < 100; i++) acks.push(client.request('test.echo', {}));
    assert.equal((await Promise.all(acks)).length, 100);
    assert.equal(client.closed, null);
    assert.equal(answered, 100);
  });

  void it('cuts a peer that stops answering pings', async () => {
    const { hub, connect } = await startHub({ pingIntervalMs: 100 });
    const dead = await connect(await tokens.sign('30'));
    const live = await connect(await tokens.sign('31'));
    dead.losePath();
    // A bound on the wait, not on the speed: a loaded machine may take a few rounds.
    await live.until(() => hub.connectionCount === 1, 15_000);
    const closed = await hub.metrics.closed.get();
    assert.equal(closed.values.find((v) => v.labels.reason === 'dead_peer')?.value, 1);
    assert.equal(live.closed, null);
  });

  void it('pings every socket each round, a slice of them per turn of the event loop', async () => {
    // Counts the server's pings per turn (the clients never ping).
    let inTurn = 0;
    let mostInOneTurn = 0;
    const prototype = WebSocket.prototype;
    const original = Object.getOwnPropertyDescriptor(prototype, 'ping')!;
    const ping = original.value as (this: WebSocket, ...args: unknown[]) => void;
    prototype.ping = function (this: WebSocket, ...args: unknown[]) {
      if (inTurn === 0) setImmediate(() => (inTurn = 0));
      mostInOneTurn = Math.max(mostInOneTurn, ++inTurn);
      ping.apply(this, args);
    };
    try {
      const { connect } = await startHub({ pingIntervalMs: 200 });
      const many = await Promise.all(
        Array.from({ length: PING_SLICE + 44 }, async (_, i) =>
          connect(await tokens.sign(`${i + 1}`)),
        ),
      );
      const pinged = many.map((c) => new Promise((resolve) => c.ws.once('ping', resolve)));
      await Promise.all(pinged);
      assert.ok(mostInOneTurn <= PING_SLICE, `${mostInOneTurn} pings in one turn`);
      assert.ok(many.every((c) => c.closed === null));
    } finally {
      Object.defineProperty(prototype, 'ping', original);
    }
  });

  void it('closes every socket with 1001 when the node shuts down', async () => {
    const { hub, connect } = await startHub();
    const client = await connect(await tokens.sign('40'));
    await hub.close();
    assert.equal((await client.waitClosed()).code, 1001);
  });
  void it('sends a handler’s after-ACK frames right after its ACK, and none when it fails', async () => {
    const { hub, connect } = await startHub();
    hub.handle(testEvent('test.after'), (context, data) => {
      context.sendAfterAck('test.one', { n: 1 });
      context.sendAfterAck('test.two', { n: 2 });
      return data.fail ? Promise.reject(new Error('refused')) : Promise.resolve({ ok: true });
    });
    const client = await connect(await tokens.sign('41'));
    const ack = await client.request('test.after', {});
    assert.equal(ack.code, 0);
    await client.until(() => client.frames.length >= 3);
    assert.deepEqual(
      client.frames.map((f) => [f.event, f.data]),
      [
        ['test.after.ack', { ok: true }],
        ['test.one', { n: 1 }],
        ['test.two', { n: 2 }],
      ],
    );
    const failed = await client.request('test.after', { fail: true });
    assert.equal(failed.code, -1);
    // The next call's after-ACK frames follow its ACK: a failed call's would come between.
    assert.equal((await client.request('test.after', {})).code, 0);
    await client.until(() => client.frames.length >= 7);
    assert.deepEqual(
      client.frames.slice(3).map((f) => [f.event, f.code]),
      [
        ['test.after.ack', -1],
        ['test.after.ack', 0],
        ['test.one', 0],
        ['test.two', 0],
      ],
      'a failed handler sent its after frames',
    );
  });

  void it('tells listeners a socket closed, with the rooms it followed; followers() counts the user’s sockets', async () => {
    const { hub, connect } = await startHub();
    const closedSockets: { userId: string; rooms: string[] }[] = [];
    hub.onSocketClosed((user, rooms) =>
      closedSockets.push({ userId: user.userId, rooms: rooms.map((k) => k.roomId) }),
    );
    const key = freshRoom();
    const user = { appCode: 'default', userId: '42' };
    const first = await connect(await tokens.sign('42'));
    const second = await connect(await tokens.sign('42'));
    const other = await connect(await tokens.sign('43'));
    for (const c of [first, second, other]) {
      assert.equal((await c.request('room.subscribe', { room_id: key.roomId })).code, 0);
    }
    assert.equal(hub.followers(user, key), 2);
    assert.equal(hub.followers({ appCode: 'other', userId: '42' }, key), 0);
    first.close();
    await first.until(() => closedSockets.length === 1);
    assert.deepEqual(closedSockets, [{ userId: '42', rooms: [key.roomId] }]);
    assert.equal(hub.followers(user, key), 1);
    await second.request('room.unsubscribe', { room_id: key.roomId });
    assert.equal(hub.followers(user, key), 0);
    second.close();
    await second.until(() => closedSockets.length === 2);
    assert.deepEqual(closedSockets[1], { userId: '42', rooms: [] });
  });

  void it('a reconnect naming its old socket in replaces cuts it at once, on this node and through the bus on another; only the user’s own', async () => {
    const a = await startHub();
    const b = await startHub();
    const cut: string[] = [];
    a.hub.onSocketClosed((user) => cut.push(user.userId));
    const token = await tokens.sign('50');
    // Its path is gone: it would answer no ping and no close frame.
    const old = await a.connect(token, '&connection_id=old-socket-1');
    old.losePath();
    const someoneElse = await a.connect(await tokens.sign('51'), '&connection_id=theirs-0001');
    assert.equal(a.hub.connectionCount, 2);
    // Another user naming the other's socket: nothing happens to it.
    const hostile = await b.connect(token, '&connection_id=new-socket-0&replaces=theirs-0001');
    // The reconnect through node b names the old socket on node a.
    const again = await b.connect(token, '&connection_id=new-socket-1&replaces=old-socket-1');
    await again.until(() => (cut.length === 1 ? true : undefined), 5_000);
    assert.deepEqual(cut, ['50']);
    assert.equal(a.hub.connectionCount, 1);
    assert.equal(someoneElse.closed, null);
    assert.equal(hostile.closed, null);
    // On the same node: the socket is cut with 4409 (a peer that still reads sees why).
    const third = await b.connect(token, '&connection_id=new-socket-2&replaces=new-socket-1');
    assert.deepEqual(await again.waitClosed(), {
      code: 4409,
      reason: 'replaced by a newer connection',
    });
    assert.equal(third.closed, null);
    const closed = await b.hub.metrics.closed.get();
    assert.equal(closed.values.find((v) => v.labels.reason === 'replaced')?.value, 1);
  });

  void it('closes with 4400 a malformed connection_id or replaces, and one that replaces itself', async () => {
    const { connect } = await startHub();
    const token = await tokens.sign('52');
    for (const query of [
      '&connection_id=short',
      '&connection_id=' + 'x'.repeat(65),
      '&connection_id=has%20space1',
      '&replaces=bad%2Fslash1',
      '&connection_id=same-id-01&replaces=same-id-01',
    ]) {
      const client = await connect(token, query);
      assert.equal((await client.waitClosed()).code, 4400, query);
    }
    const fine = await connect(token, '&connection_id=fine-id_01');
    assert.equal((await fine.request('room.subscribe', { room_id: freshRoom().roomId })).code, 0);
  });
});
