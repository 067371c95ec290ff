import { roomEventEnvelope } from '../cell/envelope.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import type { CommittedBatch } from '../cell/cell.js';
import type { CellKey } from '../cell/lease.js';
import type { BusHandler, RealtimeBus, Unsubscribe } from './bus.js';
import type { FrameMapper, UserMessage, WsFrame } from './frames.js';
import { RealtimePublisher } from './publisher.js';

/** Records what is published, synchronously. */
class RecordingBus implements RealtimeBus {
  readonly sent: [string, string][] = [];
  publish(channel: string, payload: string): Promise<void> {
    this.sent.push([channel, payload]);
    return Promise.resolve();
  }
  subscribe(_channel: string, _handler: BusHandler): Promise<Unsubscribe> {
    return Promise.resolve(() => Promise.resolve());
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const key: CellKey = { appCode: 'app', roomId: 'r1' };

/** A batch of commands, one per entry: `types[i]` are the outbox events of version from+i. */
function batch(from: number, types: string[][], kind = 'voice'): CommittedBatch {
  let n = 0;
  const envelopes = types.flatMap((list, i) =>
    list.map((type) =>
      roomEventEnvelope(
        key,
        `e${from + i}-${n++}`,
        from + i,
        { type, data: { user_id: '9' } },
        1_000,
      ),
    ),
  );
  return {
    key,
    kind,
    reactions: [],
    version: from + types.length - 1,
    entries: types.map((_, i) => ({
      version: from + i,
      requestId: `q${from + i}`,
      command: { type: 'C' },
      events: [],
    })),
    envelopes,
  };
}

const silent = pino({ level: 'silent' });
const roomFrames = (bus: RecordingBus) =>
  bus.sent
    .filter(([channel]) => channel.startsWith('rt:room:'))
    .map(([, payload]) => JSON.parse(payload) as WsFrame & { data: Record<string, unknown> });

void describe('realtime publisher', () => {
  void it('publishes one frame per event on the room channel, chaining prev_room_version', () => {
    const bus = new RecordingBus();
    const publisher = new RealtimePublisher({ bus, logger: silent });
    publisher.onCommitted(batch(1, [['Joined']]));
    publisher.onCommitted(batch(2, [[]])); // a version without outbox events (a heartbeat)
    publisher.onCommitted(batch(3, [['MicUp', 'SeatChanged'], ['Left']]));
    const frames = roomFrames(bus);
    assert.deepEqual(
      frames.map((f) => [f.event, f.data.room_version, f.data.prev_room_version]),
      [
        ['Joined', 1, null],
        ['MicUp', 3, 1],
        ['SeatChanged', 3, 3],
        ['Left', 4, 3],
      ],
    );
    // Each frame names the one before it: a lost frame is seen, even inside a version.
    assert.deepEqual(
      frames.map((f) => f.data.prev_event_id),
      [null, ...frames.slice(0, -1).map((f) => f.data.event_id)],
    );
    assert.ok(
      bus.sent.every(([channel]) => channel === 'rt:room:app:r1'),
      'one room channel',
    );
    assert.deepEqual(frames[0]!.data, {
      user_id: '9',
      app_code: 'app',
      room_id: 'r1',
      room_version: 1,
      prev_room_version: null,
      event_id: 'e1-0',
      prev_event_id: null,
    });
  });

  void it('forgets the chain when versions were committed elsewhere in between', () => {
    const bus = new RecordingBus();
    const publisher = new RealtimePublisher({ bus, logger: silent });
    publisher.onCommitted(batch(1, [['A']]));
    publisher.onCommitted(batch(5, [['B']])); // versions 2-4 committed by another node
    assert.deepEqual(
      roomFrames(bus).map((f) => f.data.prev_room_version),
      [null, null],
    );
  });

  void it('maps through the kind’s mapper: room frames and targeted user messages', () => {
    const bus = new RecordingBus();
    const kick: FrameMapper = {
      toFrames: (e) => [
        { to: 'room', event: 'voice.user.left', data: { user_id: '9' } },
        { to: 'room', event: 'a.second.room.frame', data: {} }, // dropped: one per event
        {
          to: 'user',
          userId: '9',
          event: 'voice.kicked',
          data: { room_id: e.room_id },
          unfollowRoom: true,
        },
      ],
    };
    const publisher = new RealtimePublisher({ bus, logger: silent, mappers: { voice: kick } });
    publisher.onCommitted(batch(1, [['UserKicked']]));
    publisher.onCommitted(batch(2, [['Other']], 'meeting')); // no mapper: generic frame
    assert.deepEqual(
      bus.sent.map(([channel]) => channel),
      ['rt:room:app:r1', 'rt:user:app:9', 'rt:room:app:r1'],
    );
    const user = JSON.parse(bus.sent[1]![1]) as UserMessage;
    assert.deepEqual(
      [user.frame!.event, user.frame!.data, user.unfollow],
      ['voice.kicked', { room_id: 'r1' }, { app_code: 'app', room_id: 'r1' }],
    );
    assert.equal(roomFrames(bus)[1]!.event, 'Other');
  });

  void it('a mapper that throws loses that event only, and never throws into the commit', () => {
    const bus = new RecordingBus();
    const broken: FrameMapper = {
      toFrames: (e) => {
        if (e.type === 'Bad') throw new Error('boom');
        return [{ to: 'room', event: e.type, data: {} }];
      },
    };
    const publisher = new RealtimePublisher({ bus, logger: silent, mappers: { voice: broken } });
    assert.doesNotThrow(() => publisher.onCommitted(batch(1, [['Bad', 'Good']])));
    assert.deepEqual(
      roomFrames(bus).map((f) => f.event),
      ['Good'],
    );
  });
  void it('toRoom sends a frame outside the chain: no room_version, and the next event still links to the last', () => {
    const bus = new RecordingBus();
    const publisher = new RealtimePublisher({ bus, logger: silent });
    publisher.onCommitted(batch(1, [['Joined']]));
    publisher.toRoom(key, 'meeting.member.producer.new', { producer_id: 'p1', closed: false });
    publisher.onCommitted(batch(2, [['Left']]));
    const frames = roomFrames(bus);
    assert.deepEqual(
      frames.map((f) => f.event),
      ['Joined', 'meeting.member.producer.new', 'Left'],
    );
    assert.deepEqual(frames[1]!.data, { producer_id: 'p1', closed: false });
    assert.equal(frames[1]!.code, 0);
    assert.equal(frames[2]!.data.prev_event_id, frames[0]!.data.event_id);
    assert.equal(bus.sent[1]![0], 'rt:room:app:r1');
  });
});
