/**
 * The meeting's WebSocket signalling from the outside, per meeting-api.md: real sockets on
 * the real hub, a real media server, a fake meeting membership. Channel events (join,
 * leave, member state), the whitelist, late joiners and the clean-up on leave and on
 * disconnect; the media events are in media.int.test.ts.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { MediaServer } from '../../media-server/server.js';
import type { MediaOrchestrator } from '../../media-cluster/media-orchestrator.js';
import { errors } from '../../shared/error-codes.js';
import {
  CLIENT_DTLS,
  mediaSkipReason,
  opusRtpParameters,
  startTestMediaServer,
  vp8RtpParameters,
  waitFor,
} from '../../media-server/testing/harness.js';
import type { TestClient } from '../../edge/ws/testing/ws-client.js';
import {
  mediaRoom,
  meetingCode,
  routerTransports,
  STACK_NODE_ID,
  startStack,
  type Stack,
} from './testing/stack.js';

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

void describe('meeting signalling: channel events', { skip: mediaSkipReason() }, () => {
  let server: MediaServer;
  let stack: Stack;
  let code: string;

  before(async () => {
    server = await startTestMediaServer();
  });
  after(async () => {
    await server?.close();
  });
  beforeEach(async () => {
    stack = await startStack(server);
    code = meetingCode();
    stack.membership.add(code, '16', '17');
    await stack.media.createRouter(mediaRoom(code));
  });
  afterEach(async () => {
    await stack.close();
    await stack.media.closeRouter(mediaRoom(code)).catch(() => undefined);
  });

  const joined = async (userId: string) => {
    const client = await stack.connect(userId);
    const ack = await client.request('meeting.room.join', { room_code: code });
    assert.equal(ack.code, 0, ack.message);
    return client;
  };
  /** A send transport with an Opus producer (and a VP8 one when asked). */
  const publish = async (client: TestClient, video = false) => {
    const t = await client.request('meeting.transport.create', {
      room_code: code,
      direction: 'send',
    });
    assert.equal(t.code, 0, t.message);
    const transportId = t.data.id as string;
    await client.request('meeting.transport.connect', {
      room_code: code,
      transport_id: transportId,
      dtls_parameters: CLIENT_DTLS,
    });
    const ids: string[] = [];
    for (const [kind, rtp] of video
      ? ([
          ['audio', opusRtpParameters()],
          ['video', vp8RtpParameters()],
        ] as const)
      : ([['audio', opusRtpParameters()]] as const)) {
      const p = await client.request('meeting.produce.start', {
        room_code: code,
        transport_id: transportId,
        kind,
        rtp_parameters: rtp,
      });
      assert.equal(p.code, 0, p.message);
      ids.push(p.data.producer_id as string);
    }
    return { transportId, producerIds: ids };
  };

  void it('meeting.room.join: ACK {} for an active participant, who then receives the meeting’s frames', async () => {
    const host = await joined('16');
    const member = await joined('17');
    assert.deepEqual(stack.membership.ops('socketLive'), [code, code]);
    assert.deepEqual(
      stack.membership.calls.map((c) => [c.op, c.userId, c.nodeId]),
      [
        ['socketLive', '16', STACK_NODE_ID],
        ['socketLive', '17', STACK_NODE_ID],
      ],
      'each notice names this node',
    );
    const { producerIds } = await publish(host);
    const frame = await member.waitFor((f) => f.event === 'meeting.member.producer.new');
    assert.deepEqual(frame.data, {
      room_code: code,
      user_id: 16,
      producer_id: producerIds[0],
      kind: 'audio',
      closed: false,
      // Beyond the seed: what the track carries (an audio track's default).
      source: 'microphone',
    });
    assert.equal(frame.code, 0);
  });

  void it('meeting.room.join refuses: unknown meeting, never joined, left, bad payload; and follows nothing', async () => {
    const outsider = await stack.connect('99');
    const cases: [Record<string, unknown>, string, string][] = [
      [{ room_code: '999-999-999' }, '会议不存在', 'MEETING_NOT_FOUND'],
      [{ room_code: code }, '你当前未在会议中', 'NOT_IN_MEETING'],
      [
        { room_code: 835000036 },
        '参数错误: room_code: Invalid input: expected string, received number',
        'BAD_REQUEST',
      ],
      [
        {},
        '参数错误: room_code: Invalid input: expected string, received undefined',
        'BAD_REQUEST',
      ],
      [{ room_code: '835-000-036x' }, '参数错误: room_code: XXX-XXX-XXX', 'BAD_REQUEST'],
    ];
    for (const [data, message, reason] of cases) {
      const ack = await outsider.request('meeting.room.join', data);
      assert.deepEqual(
        [ack.event, ack.code, ack.message, ack.reason],
        ['meeting.room.join.ack', -1, message, reason],
      );
    }
    // A participant who left is treated like one who never joined.
    stack.membership.meeting(code)!.active.delete('17');
    const left = await stack.connect('17');
    const ack = await left.request('meeting.room.join', { room_code: code });
    assert.deepEqual([ack.code, ack.message], [-1, '你当前未在会议中']);
    const host = await joined('16');
    await publish(host);
    await settle();
    assert.equal(outsider.events('meeting.member.producer.new').length, 0);
    assert.equal(left.events('meeting.member.producer.new').length, 0);
    assert.deepEqual(stack.membership.ops('socketLive'), [code]);
  });

  void it('drops the S→C events and any other unregistered meeting.* event a client sends: no ACK, no broadcast', async () => {
    const forger = await joined('16');
    const member = await joined('17');
    for (const event of [
      'meeting.member.joined',
      'meeting.chat',
      'meeting.member.left',
      'meeting.member.producer.new',
      'meeting.room.ended',
      'meeting.host.changed',
      'meeting.member.kicked',
    ]) {
      forger.ws.send(
        JSON.stringify({ event, seq: 500, data: { room_code: code, user_id: 17, closed: false } }),
      );
    }
    // A known event afterwards is answered: the connection is fine, the others were dropped.
    const ack = await forger.request('meeting.room.join', { room_code: code });
    assert.equal(ack.code, 0);
    await settle();
    assert.deepEqual(
      forger.frames.filter((f) => f.seq === 500),
      [],
    );
    assert.deepEqual(
      member.frames.map((f) => f.event),
      ['meeting.room.join.ack'],
    );
  });

  void it('meeting.member.state.changed: self or host→other ACK {}; a non-host forcing another is refused; fields are typed', async () => {
    const host = await joined('16');
    const member = await joined('17');
    const self = await member.request('meeting.member.state.changed', {
      room_code: code,
      audio_enabled: false,
    });
    assert.deepEqual([self.code, self.data], [0, {}]);
    const forced = await host.request('meeting.member.state.changed', {
      room_code: code,
      target_user_id: 17,
      audio_enabled: false,
      video_enabled: true,
      hand_raised: false,
    });
    assert.equal(forced.code, 0, forced.message);
    assert.deepEqual(
      stack.membership.calls.filter((c) => c.op === 'changeState').map((c) => [c.userId, c.change]),
      [
        ['17', { audio_enabled: false }],
        [
          '16',
          { target_user_id: '17', audio_enabled: false, video_enabled: true, hand_raised: false },
        ],
      ],
    );
    const refused = await member.request('meeting.member.state.changed', {
      room_code: code,
      target_user_id: 16,
      audio_enabled: false,
    });
    assert.deepEqual(
      [refused.code, refused.message, refused.reason],
      [-1, '仅主持人可执行此操作', 'HOST_ONLY_WS'],
    );
    for (const data of [
      { room_code: code },
      { room_code: code, audio_enabled: 'false' },
      { room_code: code, audio_enabled: 0 },
      { room_code: code, target_user_id: '17', audio_enabled: false },
      { room_code: code, target_user_id: 17.5, audio_enabled: false },
      { room_code: code, hand_raised: null },
    ]) {
      const bad = await host.request('meeting.member.state.changed', data);
      assert.equal(bad.code, -1, JSON.stringify(data));
      assert.match(bad.message!, /^参数错误: /, JSON.stringify(data));
    }
    stack.membership.meeting(code)!.active.delete('17');
    const gone = await member.request('meeting.member.state.changed', {
      room_code: code,
      audio_enabled: true,
    });
    assert.deepEqual([gone.code, gone.message], [-1, '你当前未在会议中']);
    assert.equal(stack.membership.calls.filter((c) => c.op === 'changeState').length, 2);
  });

  void it('a late joiner gets one meeting.member.producer.new per live producer of the others, right after its join ACK', async () => {
    const host = await joined('16');
    const { producerIds } = await publish(host, true);
    const closedOne = await host.request('meeting.producer.close', {
      room_code: code,
      producer_id: producerIds[1],
    });
    assert.equal(closedOne.code, 0);
    const member = await stack.connect('17');
    const ack = await member.request('meeting.room.join', { room_code: code });
    assert.equal(ack.code, 0);
    await member.until(() => member.frames.length >= 2);
    const at = member.frames.indexOf(ack);
    assert.deepEqual(member.frames[at + 1]?.data, {
      room_code: code,
      user_id: 16,
      producer_id: producerIds[0],
      kind: 'audio',
      closed: false,
      // Beyond the seed: what the track carries (an audio track's default).
      source: 'microphone',
    });
    await settle();
    assert.equal(
      member.events('meeting.member.producer.new').length,
      1,
      'the closed one is not listed',
    );
    // Its own producers are not announced to the joiner itself (the room's broadcasts of
    // them reached it before).
    await settle();
    const before = host.events('meeting.member.producer.new').length;
    const again = await host.request('meeting.room.join', { room_code: code });
    assert.equal(again.code, 0);
    await settle();
    assert.equal(host.events('meeting.member.producer.new').length, before);
  });

  void it('meeting.room.leave closes the user’s media on the media server, announces meeting.member.left, and stops the feed', async () => {
    const host = await joined('16');
    const member = await joined('17');
    const { producerIds } = await publish(host);
    await host.request('meeting.transport.create', { room_code: code, direction: 'recv' });
    assert.equal(await routerTransports(server, code), 2);
    const ack = await host.request('meeting.room.leave', { room_code: code });
    assert.deepEqual([ack.code, ack.data], [0, {}]);
    assert.equal(await routerTransports(server, code), 0);
    assert.equal(server.registry.stats.producers, 0);
    const left = await member.waitFor((f) => f.event === 'meeting.member.left');
    assert.deepEqual(left.data, { room_code: code, user_id: 16, reason: 'ws_leave' });
    const closed = await member.waitFor(
      (f) => f.event === 'meeting.member.producer.new' && f.data.closed === true,
    );
    assert.equal(closed.data.producer_id, producerIds[0]);
    assert.deepEqual(await stack.state.resources({ appCode: 'default', roomId: code }, '16'), {
      transports: [],
      producers: [],
      consumers: [],
    });
    assert.deepEqual(stack.membership.ops('socketsGone', '16'), [code]);
    // Still a participant (the REST leave is separate), but no longer on the channel.
    await publish(member);
    await member.waitFor((f) => f.event === 'meeting.produce.start.ack');
    await settle();
    assert.equal(
      host.frames.filter((f) => f.event === 'meeting.member.producer.new' && f.data.user_id === 17)
        .length,
      0,
    );
    const rejoin = await host.request('meeting.room.join', { room_code: code });
    assert.equal(rejoin.code, 0);
    // A non-member's leave is refused.
    const outsider = await stack.connect('99');
    const refused = await outsider.request('meeting.room.leave', { room_code: code });
    assert.deepEqual([refused.code, refused.message], [-1, '你当前未在会议中']);
  });

  /** `client` consumes every producer of `producerIds` on a recv transport of its own. */
  const consumeAll = async (client: TestClient, producerIds: string[]) => {
    const recv = await client.request('meeting.transport.create', {
      room_code: code,
      direction: 'recv',
    });
    const rtpCapabilities = (await stack.media.createRouter(mediaRoom(code))).rtpCapabilities;
    const consumerIds: string[] = [];
    for (const producerId of producerIds) {
      const consumed = await client.request('meeting.consume.start', {
        room_code: code,
        transport_id: recv.data.id,
        producer_id: producerId,
        rtp_capabilities: rtpCapabilities,
      });
      assert.equal(consumed.code, 0, consumed.message);
      consumerIds.push(consumed.data.id as string);
    }
    return consumerIds;
  };

  /** The signalling's media calls, counted by method, and made to fail where asked. */
  const counted = (fail: { closeTransport?: (id: string) => boolean } = {}) => {
    const calls = new Map<string, number>();
    const wrap = (media: MediaOrchestrator): MediaOrchestrator =>
      new Proxy(media, {
        get(target, name, receiver) {
          const value: unknown = Reflect.get(target, name, receiver);
          if (typeof name !== 'string' || typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            calls.set(name, (calls.get(name) ?? 0) + 1);
            if (name === 'closeTransport' && fail.closeTransport?.(args[0] as string)) {
              return Promise.reject(errors.MEDIA_SERVER_ERROR());
            }
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
    return { calls, wrap };
  };

  /**
   * A stack whose media calls are counted (and fail where `fail` says): 17 publishes audio
   * and video, 16 consumes both on a recv transport of its own.
   */
  const consumingHost = async (fail: { closeTransport?: (id: string) => boolean } = {}) => {
    await stack.close();
    const media = counted(fail);
    stack = await startStack(server, { wrapMedia: media.wrap });
    stack.membership.add(code, '16', '17');
    const host = await joined('16');
    const member = await joined('17');
    const { producerIds } = await publish(member, true);
    const consumerIds = await consumeAll(host, producerIds);
    return { media, host, consumerIds };
  };

  void it('a leave closes the consumers with their transport, without a call of their own', async () => {
    const { media, host, consumerIds } = await consumingHost();
    assert.equal(server.registry.stats.consumers, 2);

    const ack = await host.request('meeting.room.leave', { room_code: code });
    assert.deepEqual([ack.code, ack.data], [0, {}]);
    assert.equal(server.registry.stats.consumers, 0, 'closed with the recv transport');
    for (const id of consumerIds) assert.throws(() => server.registry.consumer(id));
    assert.equal(media.calls.get('closeConsumer') ?? 0, 0);
    assert.equal(media.calls.get('closeTransport'), 1);
    assert.deepEqual(await stack.state.resources({ appCode: 'default', roomId: code }, '16'), {
      transports: [],
      producers: [],
      consumers: [],
    });
    assert.equal(server.registry.stats.producers, 2, 'the member’s producers stay');
  });

  void it('a leave whose transport did not close closes each consumer itself and keeps the transport recorded', async () => {
    let failing = '';
    const { media, host, consumerIds } = await consumingHost({
      closeTransport: (id) => id === failing,
    });
    const key = { appCode: 'default', roomId: code };
    failing = (await stack.state.resources(key, '16')).transports[0]!.id;

    const ack = await host.request('meeting.room.leave', { room_code: code });
    assert.equal(ack.code, -1, 'the failed close is answered');
    for (const id of consumerIds) assert.throws(() => server.registry.consumer(id));
    assert.equal(media.calls.get('closeConsumer'), 2);
    const left = await stack.state.resources(key, '16');
    assert.deepEqual(
      [left.transports.map((t) => t.id), left.consumers],
      [[failing], []],
      'what did not close stays recorded, for the next attempt',
    );
  });

  void it('a socket’s close releases what it made and only that; the close of the user’s last socket also tells the meeting', async () => {
    const first = await joined('16');
    const second = await joined('16');
    const member = await joined('17');
    const made = await publish(first);
    // A reconnect's socket that made its media before the old one's close was noticed.
    const again = await publish(second);
    assert.equal(await routerTransports(server, code), 2);
    first.close();
    const closedFirst = await member.waitFor(
      (f) => f.event === 'meeting.member.producer.new' && f.data.closed === true,
    );
    assert.equal(closedFirst.data.producer_id, made.producerIds[0]);
    await waitFor(
      async () => ((await routerTransports(server, code)) === 1 ? true : undefined),
      'the first socket’s transport closed',
    );
    await settle();
    assert.equal(await routerTransports(server, code), 1, 'the second socket’s media was released');
    assert.equal(server.registry.stats.producers, 1);
    const held = await stack.state.resources({ appCode: 'default', roomId: code }, '16');
    assert.deepEqual(
      held.transports.map((t) => t.id),
      [again.transportId],
    );
    assert.deepEqual(stack.membership.ops('socketsGone'), []);
    second.close();
    await waitFor(
      async () => ((await routerTransports(server, code)) === 0 ? true : undefined),
      'the transports closed',
    );
    assert.equal(server.registry.stats.producers, 0);
    await waitFor(
      () => (stack.membership.ops('socketsGone', '16').length === 1 ? true : undefined),
      'socketsGone',
    );
    assert.equal(stack.membership.calls.find((c) => c.op === 'socketsGone')?.nodeId, STACK_NODE_ID);
    const closed = await member.waitFor(
      (f) =>
        f.event === 'meeting.member.producer.new' &&
        f.data.closed === true &&
        f.data.producer_id === again.producerIds[0],
    );
    assert.ok(closed);
    const late = await stack.connect('18');
    stack.membership.meeting(code)!.active.add('18');
    await late.request('meeting.room.join', { room_code: code });
    await settle();
    assert.equal(
      late.events('meeting.member.producer.new').length,
      0,
      'a released producer is listed',
    );
  });
  void it('two network switches in a row: each reconnect names the socket it replaces, whose media is released at once, and the third socket gets its transports', async () => {
    const member = await joined('17');
    const key = { appCode: 'default', roomId: code };
    /** A socket of user 16 that joins, sends and receives, then loses its path. */
    const socketOn = async (id: string, replaces?: string) => {
      const query = `&connection_id=${id}${replaces ? `&replaces=${replaces}` : ''}`;
      const client = await stack.connect('16', undefined, query);
      assert.equal((await client.request('meeting.room.join', { room_code: code })).code, 0);
      const send = await publish(client);
      const recv = await client.request('meeting.transport.create', {
        room_code: code,
        direction: 'recv',
      });
      assert.equal(recv.code, 0, recv.message);
      client.losePath();
      return { send, recv: recv.data.id as string };
    };
    const first = await socketOn('wifi-path-1');
    await socketOn('cell-path-2', 'wifi-path-1');
    // Without the replacement the user would hold 4 transports here, the cap: refused.
    const last = await socketOn('wifi-path-3', 'cell-path-2');
    const held = await stack.state.resources(key, '16');
    assert.deepEqual(
      held.transports.map((t) => t.id).sort(),
      [last.send.transportId, last.recv].sort(),
    );
    assert.deepEqual(
      held.producers.map((p) => p.id),
      last.send.producerIds,
    );
    assert.equal(await routerTransports(server, code), 2);
    const closedIds = () =>
      member
        .events('meeting.member.producer.new')
        .filter((f) => f.data.closed === true)
        .map((f) => f.data.producer_id);
    await member.until(() => (closedIds().length === 2 ? true : undefined));
    assert.ok(closedIds().includes(first.send.producerIds[0]));
  });
  void it('a reconnect’s live notice waits for the disconnect’s gone notice of the same node (never overtakes it)', async () => {
    stack.membership.goneDelayMs = 300; // a slow owner
    const first = await joined('16');
    first.close();
    await waitFor(
      () => (stack.membership.timeline.includes('gone 16') ? true : undefined),
      'the gone notice sent',
    );
    const again = await joined('16');
    assert.ok(again);
    assert.deepEqual(stack.membership.timeline, ['live 16', 'gone 16', 'gone done 16', 'live 16']);
  });

  void it('while a socket follows the meeting, the meeting keeps hearing socketLive; after the leave it does not', async () => {
    const quick = await startStack(server, { liveRefreshMs: 50 });
    try {
      quick.membership.add(code, '16');
      const client = await quick.connect('16');
      assert.equal((await client.request('meeting.room.join', { room_code: code })).code, 0);
      await waitFor(
        () => (quick.membership.ops('socketLive').length >= 3 ? true : undefined),
        'refreshed socketLive',
      );
      assert.equal((await client.request('meeting.room.leave', { room_code: code })).code, 0);
      await settle();
      const after = quick.membership.ops('socketLive').length;
      await settle();
      assert.equal(quick.membership.ops('socketLive').length, after);
    } finally {
      await quick.close();
    }
  });
});
