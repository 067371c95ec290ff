/**
 * The meeting's media signalling against a member who abuses it, on a real media server:
 * transports, producers and consumers are capped per user in a room and per socket (so one
 * member cannot take the media server's ports from every other room), and a producer that
 * races the release of its user's media is closed, never recorded nor announced.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { MediaServer } from '../../media-server/server.js';
import {
  mediaSkipReason,
  opusRtpParameters,
  startTestMediaServer,
} from '../../media-server/testing/harness.js';
import type { MediaOrchestrator } from '../../media-cluster/media-orchestrator.js';
import { DEFAULT_MEDIA_CAPS } from '../../edge/room-media/media-admission.js';
import type { Frame, TestClient } from '../../edge/ws/testing/ws-client.js';
import {
  mediaRoom,
  meetingCode,
  startStack,
  TEST_MEDIA_SERVER,
  type Stack,
} from './testing/stack.js';

/** 10 RTC ports (outside the range the other media tests use): 10 transports in all. */
const PORTS = { rtcMinPort: 38_900, rtcMaxPort: 38_909 };

const ok = (ack: Frame) => {
  assert.equal(ack.code, 0, `${ack.event}: ${ack.message}`);
  return ack.data;
};

/** A promise and the function that settles it: a seam a test opens when it chooses. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * Media calls held where a test chooses: while `armed`, a call named in `seams` says it was
 * reached and waits for its gate to open.
 */
function seamedMedia(seams: Record<string, { reached: () => void; held: Promise<void> }>) {
  const control = { armed: false };
  const wrap = (media: MediaOrchestrator): MediaOrchestrator =>
    new Proxy(media, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        const seam = typeof name === 'string' ? seams[name] : undefined;
        if (typeof value !== 'function') return value;
        const call = (value as (...a: unknown[]) => unknown).bind(target);
        if (!seam) return call;
        return async (...args: unknown[]) => {
          if (control.armed) {
            seam.reached();
            await seam.held;
          }
          return call(...args);
        };
      },
    });
  return { control, wrap };
}

void describe('meeting signalling: media abuse', { skip: mediaSkipReason() }, () => {
  let server: MediaServer;
  const stacks: Stack[] = [];
  const codes: string[] = [];

  before(async () => {
    server = await startTestMediaServer(PORTS);
  });
  after(async () => {
    await server?.close();
  });
  afterEach(async () => {
    for (const stack of stacks.splice(0)) {
      for (const code of codes) await stack.media.closeRouter(mediaRoom(code)).catch(() => null);
      await stack.close();
    }
    codes.length = 0;
  });

  const meeting = async (stack: Stack, host: string, ...others: string[]) => {
    const code = meetingCode();
    codes.push(code);
    stack.membership.add(code, host, ...others);
    const { rtpCapabilities } = await stack.media.createRouter(mediaRoom(code));
    return { code, rtpCapabilities };
  };
  const joined = async (stack: Stack, userId: string, code: string) => {
    const client = await stack.connect(userId);
    ok(await client.request('meeting.room.join', { room_code: code }));
    return client;
  };
  const createTransport = (client: TestClient, code: string, direction: 'send' | 'recv') =>
    client.request('meeting.transport.create', { room_code: code, direction });

  void it('caps one member’s transports and producers: another meeting’s host still gets ports', async () => {
    const stack = await startStack(server);
    stacks.push(stack);
    const mine = await meeting(stack, '16');
    const theirs = await meeting(stack, '30');
    const greedy = await joined(stack, '16', mine.code);

    // Sent together, so that no count is read before the others are made.
    const acks = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        createTransport(greedy, mine.code, i % 2 === 0 ? 'send' : 'recv'),
      ),
    );
    const cap = DEFAULT_MEDIA_CAPS.perUser.transports;
    assert.equal(acks.filter((a) => a.code === 0).length, cap);
    for (const refused of acks.filter((a) => a.code !== 0)) {
      assert.deepEqual(
        [refused.code, refused.message, refused.reason],
        [
          -1,
          `媒体资源已达上限：每人在一个房间最多 ${cap} 个 transport，请先关闭不再使用的`,
          'MEDIA_USER_LIMIT',
        ],
      );
    }
    assert.equal(server.registry.stats.transports, cap, 'nothing was made past the cap');
    const host = await joined(stack, '30', theirs.code);
    ok(await createTransport(host, theirs.code, 'send'));

    // Producers: capped the same way, on one send transport.
    const send = acks.find((a, i) => a.code === 0 && i % 2 === 0)!.data.id as string;
    const produce = (ssrc: number) =>
      greedy.request('meeting.produce.start', {
        room_code: mine.code,
        transport_id: send,
        kind: 'audio',
        rtp_parameters: { ...opusRtpParameters(ssrc), mid: String(ssrc) },
      });
    const producers: string[] = [];
    for (let i = 0; i < DEFAULT_MEDIA_CAPS.perUser.producers; i++) {
      producers.push(ok(await produce(1000 + i)).producer_id as string);
    }
    assert.equal((await produce(2000)).reason, 'MEDIA_USER_LIMIT');
    // A closed producer frees its slot.
    ok(
      await greedy.request('meeting.producer.close', {
        room_code: mine.code,
        producer_id: producers[0],
      }),
    );
    ok(await produce(2001));

    // Leaving releases everything: the transports' slots are free again.
    ok(await greedy.request('meeting.room.leave', { room_code: mine.code }));
    ok(await greedy.request('meeting.room.join', { room_code: mine.code }));
    for (let i = 0; i < cap; i++) ok(await createTransport(greedy, mine.code, 'recv'));
    assert.equal((await createTransport(greedy, mine.code, 'recv')).reason, 'MEDIA_USER_LIMIT');
  });

  void it('caps what one socket makes across meetings, whoever the meetings count', async () => {
    const caps = {
      perUser: { ...DEFAULT_MEDIA_CAPS.perUser, transports: 3 },
      perSocket: { ...DEFAULT_MEDIA_CAPS.perSocket, transports: 4 },
    };
    const stack = await startStack(server, { caps });
    stacks.push(stack);
    const first = await meeting(stack, '16');
    const second = await meeting(stack, '16');
    const socket = await joined(stack, '16', first.code);
    ok(await socket.request('meeting.room.join', { room_code: second.code }));
    for (let i = 0; i < 3; i++) ok(await createTransport(socket, first.code, 'recv'));
    assert.equal((await createTransport(socket, first.code, 'recv')).reason, 'MEDIA_USER_LIMIT');
    ok(await createTransport(socket, second.code, 'recv'));
    const refused = await createTransport(socket, second.code, 'recv');
    assert.deepEqual(
      [refused.message, refused.reason],
      ['媒体资源已达上限：每个连接最多 4 个 transport，请先关闭不再使用的', 'MEDIA_SOCKET_LIMIT'],
    );
    // Another socket of the same user has a count of its own; the user's in the room holds.
    const other = await joined(stack, '16', second.code);
    ok(await createTransport(other, second.code, 'send'));
  });

  /**
   * The host's produce passes every check and is held on its way to the media server; then
   * `release` starts a release of the host's media, held between its read of the records
   * (the send transport only) and its closes; then the produce goes on, then the release.
   * Answers the produce's ACK, once the release is done.
   */
  const racedProduce = async (
    release: (stack: Stack, code: string) => Promise<unknown>,
  ): Promise<{ ack: Frame; stack: Stack; code: string; observer: TestClient }> => {
    const produceHeld = gate();
    const produceReached = gate();
    const releaseHeld = gate();
    const releaseReached = gate();
    const { control, wrap } = seamedMedia({
      createProducer: { reached: produceReached.open, held: produceHeld.opened },
      closeTransport: { reached: releaseReached.open, held: releaseHeld.opened },
    });
    const stack = await startStack(server, { wrapMedia: wrap });
    stacks.push(stack);
    const { code } = await meeting(stack, '16', '17', '18');
    const host = await joined(stack, '16', code);
    const observer = await joined(stack, '18', code);
    const send = ok(await createTransport(host, code, 'send')).id as string;

    control.armed = true;
    const produced = host.request('meeting.produce.start', {
      room_code: code,
      transport_id: send,
      kind: 'audio',
      rtp_parameters: opusRtpParameters(3333),
    });
    await produceReached.opened;
    const released = release(stack, code);
    await releaseReached.opened;
    produceHeld.open();
    const ack = await produced;
    releaseHeld.open();
    await released;
    control.armed = false;
    return { ack, stack, code, observer };
  };

  /** Nothing of 16's is left recorded or on the media server, nor was it announced. */
  const nothingLeft = async (stack: Stack, code: string, observer: TestClient) => {
    const held = await stack.state.resources({ appCode: 'default', roomId: code }, '16');
    assert.deepEqual(held, { transports: [], producers: [], consumers: [] });
    assert.equal(server.registry.stats.producers, 0, 'the producer was closed');
    // A later announcement reaches the observer: the host's never did before it.
    const member = await joined(stack, '17', code);
    const memberSend = ok(await createTransport(member, code, 'send')).id as string;
    const mark = ok(
      await member.request('meeting.produce.start', {
        room_code: code,
        transport_id: memberSend,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(4444),
      }),
    ).producer_id;
    await observer.waitFor(
      (f) => f.event === 'meeting.member.producer.new' && f.data.producer_id === mark,
    );
    const announced = observer.frames.filter(
      (f) => f.event === 'meeting.member.producer.new' && f.data.user_id === 16 && !f.data.closed,
    );
    assert.deepEqual(announced, []);
  };

  void it('a producer made while its kicked user’s media is released is closed, never recorded nor announced', async () => {
    const { ack, stack, code, observer } = await racedProduce((stack, code) => {
      // Kicked: the meeting's commit releases the host's media (on the owner, any node).
      stack.membership.meeting(code)!.active.delete('16');
      return stack.signalling.releaseUserMedia(
        { appCode: 'default', roomId: code },
        '16',
        TEST_MEDIA_SERVER,
      );
    });
    assert.deepEqual([ack.code, ack.message], [-1, '你当前未在会议中']);
    await nothingLeft(stack, code, observer);
  });

  void it('a producer made while its user leaves the channel is closed, never recorded nor announced', async () => {
    const { ack, stack, code, observer } = await racedProduce(async (stack, code) => {
      // Another socket of the host leaves the channel: still a member, its media released.
      const other = await joined(stack, '16', code);
      return other.request('meeting.room.leave', { room_code: code });
    });
    assert.deepEqual([ack.code, ack.message], [-1, '会议资源不存在']);
    await nothingLeft(stack, code, observer);
  });

  void it('a transport made while its user is kicked through another node is closed, not recorded', async () => {
    const reached = gate();
    const held = gate();
    const { control, wrap } = seamedMedia({
      createTransport: { reached: reached.open, held: held.opened },
    });
    const stack = await startStack(server, { wrapMedia: wrap });
    stacks.push(stack);
    const { code } = await meeting(stack, '16');
    const host = await joined(stack, '16', code);
    const transportsBefore = server.registry.stats.transports;
    control.armed = true;
    const created = createTransport(host, code, 'send');
    // Kicked while the transport is on its way: the meeting's owner (another node) released
    // what the records held then, which is nothing.
    await reached.opened;
    stack.membership.meeting(code)!.active.delete('16');
    held.open();
    const ack = await created;
    control.armed = false;
    assert.deepEqual([ack.code, ack.message], [-1, '你当前未在会议中']);
    const records = await stack.state.resources({ appCode: 'default', roomId: code }, '16');
    assert.deepEqual(records.transports, []);
    assert.equal(server.registry.stats.transports, transportsBefore, 'the transport was closed');
  });
});
