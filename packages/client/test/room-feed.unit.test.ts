/**
 * RoomFeed (packages/client/src/room-feed.ts) for an app that keeps the room's state fetched
 * over REST (`fetchFirst`, `onRefetch` resolving with the state's `room_version`), against a
 * scripted socket: the state is fetched after the first subscription with the frames held
 * meanwhile; what the fetched state holds is skipped; the chain is checked from it (the rule
 * of docs/protocol.md, "Staying consistent") and a gap fetches it again, the frames waiting;
 * after a drop the subscription asks for `since_version` (nothing applied since the fetch) or
 * `since_event_id`, and the replay needs no fetch; a failed fetch is tried again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RealtimeClient, type SocketLike } from '../src/realtime.js';
import { RoomFeed, type RoomFrame } from '../src/room-feed.js';
import { settle } from './media-testing.js';

const ROOM = 'vr_room';

interface Sent {
  event: string;
  seq: number;
  data: Record<string, unknown>;
}

/** A WebSocket the test opens, drops and answers by hand. */
class ScriptedSocket implements SocketLike {
  static readonly all: ScriptedSocket[] = [];
  readyState = 0;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: { code: number; reason?: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  readonly sent: Sent[] = [];
  private answered = 0;

  constructor(readonly url: string) {
    ScriptedSocket.all.push(this);
  }
  send(data: string): void {
    this.sent.push(JSON.parse(data) as Sent);
  }
  close(code = 1000): void {
    this.readyState = 3;
    this.onclose?.({ code });
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
  push(frame: object): void {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  /** Answers the next request not answered yet, which must be `event`; returns its data. */
  ack(event: string, data: object = {}): Record<string, unknown> {
    const request = this.sent[this.answered++];
    assert.equal(request?.event, event);
    this.push({ event: `${event}.ack`, seq: request.seq, code: 0, data });
    return request.data;
  }
}

const frame = (
  version: number,
  prevVersion: number | null,
  id: string,
  prevId: string | null,
): RoomFrame => ({
  event: 'voice.member.joined',
  code: 0,
  data: {
    app_code: 'default',
    room_id: ROOM,
    room_version: version,
    prev_room_version: prevVersion,
    event_id: id,
    prev_event_id: prevId,
    user_id: version,
  },
});

/** A feed on a new client whose fetches answer the versions `served` gives, in turn. */
async function started(served: () => number | Promise<number>) {
  const client = new RealtimeClient({
    url: () => 'ws://test/ws',
    WebSocket: ScriptedSocket,
    maxBackoffMs: 1,
  });
  const applied: string[] = [];
  const events: string[] = [];
  let fetches = 0;
  const feed = new RoomFeed(client, {
    room: ROOM,
    fetchFirst: true,
    onFrame: (f) => {
      applied.push(f.data.event_id);
      events.push(`frame ${f.data.event_id}`);
    },
    onRefetch: async () => {
      const version = await served();
      fetches += 1;
      events.push(`fetched ${version}`);
      return version;
    },
    onLive: () => events.push('live'),
  });
  client.connect();
  const socket = () => ScriptedSocket.all.at(-1)!;
  socket().open();
  feed.start();
  await settle();
  /** The socket drops (4000) and the client opens a new one. */
  const reconnect = async () => {
    socket().close(4000);
    await new Promise((resolve) => setTimeout(resolve, 5));
    socket().open();
    await settle();
  };
  return { client, feed, socket, reconnect, applied, events, fetches: () => fetches };
}

describe('RoomFeed with a fetched state', () => {
  it('fetches after the first subscription, skips what the state has, follows the chain', async () => {
    let release: () => void = () => undefined;
    const { socket, applied, events, fetches } = await started(
      () => new Promise<number>((resolve) => (release = () => resolve(5))),
    );
    assert.deepEqual(socket().ack('room.subscribe'), { room_id: ROOM }, 'nothing to replay yet');
    await settle();
    // While the fetch runs: one the state will hold, then the next ones.
    socket().push(frame(5, 4, 'e5', 'e4'));
    socket().push(frame(6, 5, 'e6', 'e5'));
    socket().push(frame(7, 6, 'e7', 'e6'));
    assert.deepEqual(applied, [], 'frames wait for the state');
    release();
    await settle();
    assert.deepEqual(events, ['fetched 5', 'frame e6', 'frame e7', 'live']);
    // Two events of one command share a version: the chain orders them. A repeat is dropped.
    socket().push(frame(7, 7, 'e7b', 'e7'));
    socket().push(frame(7, 6, 'e7', 'e6'));
    assert.deepEqual(applied, ['e6', 'e7', 'e7b']);
    assert.equal(fetches(), 1);
  });

  it('the first frame after a fetch follows it by version (a heartbeat may lie between)', async () => {
    const { socket, applied } = await started(() => 5);
    socket().ack('room.subscribe');
    await settle();
    socket().push(frame(9, 3, 'e9', 'e3'));
    assert.deepEqual(applied, ['e9']);
  });

  it('a gap fetches the state again, the frames waiting; then the chain goes on from it', async () => {
    const versions = [5, 8];
    let release: () => void = () => undefined;
    const { socket, applied, events, fetches } = await started(() =>
      versions.length === 1
        ? new Promise<number>((resolve) => (release = () => resolve(versions.shift()!)))
        : versions.shift()!,
    );
    socket().ack('room.subscribe');
    await settle();
    socket().push(frame(6, 5, 'e6', 'e5'));
    // e7 never came: e8 is a gap; e9 arrives during the fetch.
    socket().push(frame(8, 7, 'e8', 'e7'));
    socket().push(frame(9, 8, 'e9', 'e8'));
    assert.deepEqual(applied, ['e6']);
    release();
    await settle();
    assert.deepEqual(events, ['fetched 5', 'live', 'frame e6', 'fetched 8', 'frame e9']);
    assert.equal(fetches(), 2);
  });

  it('an unknown previous frame (the room moved) is a gap too', async () => {
    const versions = [5, 7];
    const { socket, applied, fetches } = await started(() => versions.shift()!);
    socket().ack('room.subscribe');
    await settle();
    socket().push(frame(7, null, 'e7', null));
    await settle();
    assert.deepEqual([applied, fetches()], [[], 2]);
  });

  it('after a drop: since_version, then since_event_id; the replay needs no fetch', async () => {
    const { client, socket, reconnect, applied, events, fetches } = await started(() => 5);
    socket().ack('room.subscribe');
    await settle();
    // Dropped before any frame: the state's version says where to replay from.
    await reconnect();
    assert.equal(client.opens, 2);
    socket().push(frame(7, 6, 'e7', 'e6')); // live, before the ACK
    assert.deepEqual(socket().ack('room.subscribe', { replay: [frame(6, 5, 'e6', 'e5')] }), {
      room_id: ROOM,
      since_version: 5,
    });
    await settle();
    // Dropped again: the replay starts at the last frame applied, and may repeat a live one.
    await reconnect();
    socket().push(frame(8, 7, 'e8', 'e7'));
    assert.deepEqual(
      socket().ack('room.subscribe', {
        replay: [frame(8, 7, 'e8', 'e7'), frame(9, 8, 'e9', 'e8')],
      }),
      { room_id: ROOM, since_event_id: 'e7' },
    );
    await settle();
    assert.deepEqual(applied, ['e6', 'e7', 'e8', 'e9']);
    assert.equal(fetches(), 1);
    assert.deepEqual(events.filter((e) => e === 'live').length, 3);
  });

  it('a refused replay fetches again; a failed fetch is tried again', async () => {
    let calls = 0;
    const { socket, reconnect, applied, events } = await started(() => {
      calls += 1;
      if (calls === 2) throw new Error('the network failed');
      return calls === 1 ? 5 : 9;
    });
    socket().ack('room.subscribe');
    await settle();
    await reconnect();
    socket().ack('room.subscribe', { refetch: true });
    await settle();
    socket().push(frame(9, 8, 'e9', 'e8'));
    socket().push(frame(10, 9, 'e10', 'e9'));
    assert.deepEqual(applied, [], 'held while the fetch is tried again');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await settle();
    assert.deepEqual(applied, ['e10']);
    assert.deepEqual(events, ['fetched 5', 'live', 'fetched 9', 'frame e10', 'live']);
  });
});
