/**
 * The meeting media helper (packages/client/src/media/meeting-media.ts) against a scripted
 * socket and device: a producer whose consumer could not be made for a reason that may pass
 * (`MEDIA_SERVER_ERROR`, no answer) is consumed on a later try, with backoff; a refusal that
 * will not pass is shown once; a retry of a previous socket's transports is dropped; a
 * change hands out a new `remote` and leaves the previous one as it was.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { MeetingMedia } from '../src/media/index.js';
import {
  refused,
  ScriptedSocket,
  scriptedDevice,
  settle,
  type ConnectionStates,
} from './media-testing.js';

const CODE = '123-456-789';
/** A started meeting media whose `consume.start` answers per producer as `consume` says. */
async function started(consume: (producerId: string, attempt: number) => Promise<unknown>) {
  const socket = new ScriptedSocket();
  socket.script('meeting.transport.create', (d) =>
    Promise.resolve({ id: `${String(d.direction)}-1` }),
  );
  const attempts = new Map<string, number>();
  socket.script('meeting.consume.start', (d) => {
    const producerId = String(d.producer_id);
    const n = (attempts.get(producerId) ?? 0) + 1;
    attempts.set(producerId, n);
    return consume(producerId, n);
  });
  const errors: string[] = [];
  const states: ConnectionStates = new Map();
  const media = new MeetingMedia(socket, {
    roomCode: CODE,
    selfId: 1,
    onError: (m) => errors.push(m),
    makeDevice: () => scriptedDevice([], states),
  });
  media.prepare();
  await media.start();
  const announce = (userId: number, producerId: string) =>
    socket.deliver('meeting.member.producer.new', {
      room_code: CODE,
      user_id: userId,
      producer_id: producerId,
      kind: 'audio',
      closed: false,
    });
  return { socket, media, errors, attempts, announce, states };
}

const consumed = (producerId: string) =>
  Promise.resolve({ id: `c-${producerId}`, producerId, kind: 'audio', rtpParameters: {} });

describe('meeting media', () => {
  beforeEach(() => {
    mock.timers.enable({ apis: ['setTimeout'] });
    (globalThis as Record<string, unknown>).MediaStream = class {};
  });
  afterEach(() => mock.timers.reset());

  it('consumes a producer on a later try after failures that may pass, with backoff', async () => {
    const { media, errors, attempts, announce } = await started((producerId, n) =>
      n <= 2 ? refused(n === 1 ? 'TIMEOUT' : 'MEDIA_SERVER_ERROR') : consumed(producerId),
    );
    const before = media.remote;
    const changes: unknown[] = [];
    media.onChange(() => changes.push(media.remote));
    announce(7, 'p7');
    await settle();
    assert.equal(media.remote.size, 0);
    mock.timers.tick(999);
    await settle();
    assert.equal(attempts.get('p7'), 1, 'the first retry after 1 s');
    mock.timers.tick(1);
    await settle();
    mock.timers.tick(2_000);
    await settle();
    assert.equal(attempts.get('p7'), 3);
    assert.equal(media.remote.get(7)?.audioConsumerId, 'c-p7');
    assert.deepEqual(changes, [media.remote], 'one change: the consumer shown');
    assert.equal(before.size, 0, 'the map handed out before is left as it was');
    assert.deepEqual(errors, []);
    media.close();
  });

  it('shows a refusal that will not pass once, and gives up after five passing failures', async () => {
    const { media, errors, attempts, announce } = await started((producerId) =>
      producerId === 'p8' ? refused('MEDIA_RESOURCE_NOT_FOUND') : refused('MEDIA_SERVER_ERROR'),
    );
    announce(8, 'p8');
    announce(9, 'p9');
    for (let i = 0; i < 10; i++) {
      mock.timers.tick(15_000);
      await settle();
    }
    assert.deepEqual(Object.fromEntries(attempts), { p8: 1, p9: 5 });
    assert.deepEqual(errors, [
      '无法接收成员 8 的媒体: refused: MEDIA_RESOURCE_NOT_FOUND',
      '无法接收成员 9 的媒体: refused: MEDIA_SERVER_ERROR',
    ]);
    media.close();
  });

  it('drops a retry once the page made its media again on a new socket', async () => {
    const { socket, media, attempts, announce } = await started(() => refused('TIMEOUT'));
    announce(7, 'p7');
    await settle();
    media.prepare(); // the socket dropped: the next join makes everything again
    mock.timers.tick(60_000);
    await settle();
    assert.equal(attempts.get('p7'), 1);
    assert.equal(socket.sent('meeting.consume.start').length, 1);
    media.close();
  });

  it('joins again when a transport fails, and only for a transport still in use', async () => {
    const { socket, media, states, errors } = await started(consumed);
    socket.script('meeting.room.join', () => Promise.resolve({}));
    const created = () => socket.sent('meeting.transport.create').length;
    const before = created();
    assert.ok(states.has('recv-1'), 'the receiving transport was made');
    states.get('recv-1')?.('failed');
    await settle();
    assert.equal(socket.sent('meeting.room.join').length, 1);
    assert.ok(created() > before, 'its transports are made again');
    assert.deepEqual(errors, []);
    media.close();
    states.get('recv-1')?.('failed');
    await settle();
    assert.equal(socket.sent('meeting.room.join').length, 1, 'nothing after close');
  });

  it('resumes a video on its tile’s layer, then tells each change of width and visibility', async () => {
    const video = (producerId: string) =>
      Promise.resolve({ id: `c-${producerId}`, producerId, kind: 'video', rtpParameters: {} });
    const { socket, media } = await started(video);
    const announce = (userId: number, producerId: string) =>
      socket.deliver('meeting.member.producer.new', {
        room_code: CODE,
        user_id: userId,
        producer_id: producerId,
        kind: 'video',
        closed: false,
      });
    announce(7, 'v7');
    await settle();
    const told = () => socket.sent('meeting.consumer.preferences').map((r) => r.data);
    const resumed = () => socket.sent('meeting.consume.resume').map((r) => r.data);
    media.showVideo(7, { maxWidth: 300.4, visible: true });
    await settle();
    assert.deepEqual(told(), [], 'not before the track is attached (it would resume it)');
    await media.attached('c-v7');
    // One wish resumes it already on the small layer: no resume that starts on the top one.
    assert.deepEqual(told(), [{ consumer_id: 'c-v7', max_width: 300, paused: false }]);
    assert.deepEqual(resumed(), []);
    media.showVideo(7, { maxWidth: 300, visible: true });
    await settle();
    assert.equal(told().length, 1, 'a repeat is not sent');
    media.showVideo(7, { maxWidth: 1280, visible: false });
    await settle();
    assert.deepEqual(told()[1], { consumer_id: 'c-v7', max_width: 1280, paused: true });

    // A tile off screen when its track is attached: told paused, never resumed.
    announce(8, 'v8');
    await settle();
    media.showVideo(8, { maxWidth: 200, visible: false });
    await media.attached('c-v8');
    assert.deepEqual(told()[2], { consumer_id: 'c-v8', max_width: 200, paused: true });
    assert.deepEqual(resumed(), []);

    // A track attached before its tile was measured: resumed, then told once measured.
    announce(9, 'v9');
    await settle();
    await media.attached('c-v9');
    assert.deepEqual(resumed(), [{ consumer_id: 'c-v9' }]);
    media.showVideo(9, { maxWidth: 640, visible: true });
    await settle();
    assert.deepEqual(told()[3], { consumer_id: 'c-v9', max_width: 640, paused: false });
    media.close();
  });
});
