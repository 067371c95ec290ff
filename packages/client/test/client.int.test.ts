/**
 * @echochat/client against a real node, as an app uses it: REST calls by operationId with
 * typed answers and typed refusals, the socket's requests and ACKs, and a room followed with
 * RoomFeed across a drop and across a reconnect while the room changed: every frame arrives
 * once, in order, the missed ones replayed (no refetch).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { mediaSkipReason } from '../../../src/media-server/testing/harness.js';
import { startMeetingNode, type MeetingNode } from '../../../src/main/testing/meeting-node.js';
import {
  ApiError,
  RealtimeClient,
  RealtimeError,
  RestClient,
  RoomFeed,
  requestId,
  socketUrl,
  type RoomFrame,
  type SocketConstructor,
} from '../src/index.js';

interface Session {
  readonly rest: RestClient;
  readonly token: string;
  readonly id: number;
}

describe('@echochat/client against a node', { skip: mediaSkipReason() }, () => {
  let started: MeetingNode | undefined;
  let baseUrl: string;
  const sockets: RealtimeClient[] = [];

  const session = async (username: string): Promise<Session> => {
    let token = '';
    const rest = new RestClient({ baseUrl, token: () => token });
    const credentials = { username, password: 'secret123' };
    await rest.call('register', { body: credentials });
    const login = await rest.call('login', { body: credentials });
    token = login.access_token;
    return { rest, token, id: login.user.id };
  };
  const socket = (who: Session) => {
    const client = new RealtimeClient({
      url: () => socketUrl(baseUrl, who.token),
      WebSocket: WebSocket as unknown as SocketConstructor,
    });
    sockets.push(client);
    client.connect();
    return client;
  };
  const opened = (client: RealtimeClient, opens: number) =>
    until(() => client.isOpen && client.opens >= opens, `socket open #${opens}`);

  before(async () => {
    started = await startMeetingNode([]);
    baseUrl = started.node.httpAddress;
  });
  after(async () => {
    for (const client of sockets) client.close();
    await started?.close();
  });

  it('calls the REST API by operationId: typed answers, refusals with their reason', async () => {
    const alice = await session('sdk_alice');
    const me = await alice.rest.call('getMe');
    assert.equal(me.username, 'sdk_alice');
    const created = await alice.rest.call('createMeeting', {
      body: { title: 'Standup', request_id: requestId() },
    });
    assert.match(created.room.room_code, /^\d{3}-\d{3}-\d{3}$/);
    const detail = await alice.rest.call('getMeeting', { path: { code: created.room.room_code } });
    assert.equal(detail.participants[0]?.role_label, '主持人');

    const refused = await alice.rest
      .call('joinMeeting', { path: { code: '000-000-000' } })
      .catch((error: unknown) => error);
    assert.ok(refused instanceof ApiError);
    assert.deepEqual(
      [refused.status, refused.reason, refused.message],
      [404, 'MEETING_NOT_FOUND', '会议不存在'],
    );

    const anonymous = new RestClient({ baseUrl });
    const unauthenticated = await anonymous.call('getMe').catch((error: unknown) => error);
    assert.ok(unauthenticated instanceof ApiError);
    assert.equal(unauthenticated.status, 401);

    const nowhere = new RestClient({ baseUrl: 'http://127.0.0.1:1' });
    const network = await nowhere.call('getMe').catch((error: unknown) => error);
    assert.ok(network instanceof ApiError);
    assert.deepEqual([network.status, network.reason], [0, 'NETWORK']);
  });

  it('matches ACKs to requests, and gives a refused one its message and reason', async () => {
    const bob = await session('sdk_bob');
    const ws = socket(bob);
    await opened(ws, 1);
    const refused = await ws
      .request('room.subscribe', { room_id: 'no-such-room' })
      .catch((error: unknown) => error);
    assert.ok(refused instanceof RealtimeError);
    assert.equal(refused.reason, 'NOT_IN_ROOM_WS');
    // Many at once: each ACK resolves its own request.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ws.request('room.unsubscribe', { room_id: `room-${i}` }),
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.room_id),
      Array.from({ length: 20 }, (_, i) => `room-${i}`),
    );
  });

  it('follows a voice room across a drop and a reconnect: every frame once, the missed ones replayed', async () => {
    const owner = await session('sdk_owner');
    const guests = await Promise.all(['sdk_g1', 'sdk_g2', 'sdk_g3'].map((name) => session(name)));
    const room = await owner.rest.call('createRoom', {
      body: { title: 'Lounge', request_id: requestId() },
    });
    await owner.rest.call('joinRoom', {
      path: { room_id: room.room_id },
      body: { request_id: requestId() },
    });

    const ws = socket(owner);
    const frames: RoomFrame[] = [];
    let refetches = 0;
    const feed = new RoomFeed(ws, {
      room: room.room_id,
      onFrame: (frame) => frames.push(frame),
      onRefetch: () => {
        refetches += 1;
      },
    });
    feed.start();
    await opened(ws, 1);
    const join = (guest: Session) =>
      guest.rest.call('joinRoom', {
        path: { room_id: room.room_id },
        body: { request_id: requestId() },
      });
    const joinedFrames = () => frames.filter((f) => f.event === 'voice.member.joined');

    await until(() => feed.isLive, 'subscribed');
    await join(guests[0]!);
    await until(() => joinedFrames().length === 1, 'first join, live');

    // A drop: the socket comes back by itself; a join meanwhile arrives once.
    ws.drop();
    await join(guests[1]!);
    await opened(ws, 2);
    await until(() => joinedFrames().length === 2, 'second join, after the drop');

    // Away while the room changes: back, the ACK of room.subscribe replays what was missed.
    ws.close();
    assert.equal(feed.isLive, false);
    await join(guests[2]!);
    ws.connect();
    await opened(ws, 3);
    await until(() => joinedFrames().length === 3, 'third join, replayed');

    const ids = frames.map((f) => f.data.event_id);
    assert.equal(new Set(ids).size, ids.length, 'no frame twice');
    const versions = frames.map((f) => f.data.room_version);
    assert.deepEqual(
      versions,
      [...versions].sort((a, b) => a - b),
      'in order',
    );
    assert.deepEqual(
      joinedFrames().map((f) => f.data.user_id),
      guests.map((g) => g.id),
    );
    assert.equal(refetches, 0);
    feed.stop();
  });
});

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
