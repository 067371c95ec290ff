/**
 * The AsyncAPI document against the wire, as a client team checks it: a real node (embedded
 * SQLite and media server) serves `/docs/asyncapi.json`; a scenario drives meetings (join,
 * state change, media, chat, kick, leave, end), voice rooms (subscribe, media, seats,
 * unsubscribe), a notification and refusals over `/ws`; every frame received, ACK or push, is
 * validated with ajv (draft 2020-12) against the document's messages of that name. No frame
 * may miss its schema, and no event may be one the document does not list.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { TestClient } from './testing/ws-client.js';
import {
  CLIENT_DTLS,
  mediaSkipReason,
  opusRtpParameters,
} from '../../media-server/testing/harness.js';
import { nodeWsProtocol } from '../../main/ws-protocol.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

type Message = { name: string; payload: Record<string, unknown> };

describe('/ws frames conform to the AsyncAPI document (ajv)', { skip: mediaSkipReason() }, () => {
  let started: MeetingNode | undefined;
  /** Per received event name (ACKs and frames): the validators of its messages. */
  const validators = new Map<string, { key: string; validate: ValidateFunction }[]>();
  const sockets: TestClient[] = [];

  before(async () => {
    started = await startMeetingNode(['anna', 'bert', 'carl']);
    const res = await started.node.http.inject({ url: '/docs/asyncapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json<{ asyncapi: string; components: { messages: Record<string, Message> } }>();
    assert.equal(doc.asyncapi, '3.0.0');
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    for (const [key, message] of Object.entries(doc.components.messages)) {
      if (key.startsWith('send.')) continue; // what clients send: not received
      const list = validators.get(message.name) ?? [];
      list.push({ key, validate: ajv.compile(message.payload) });
      validators.set(message.name, list);
    }
  });
  after(async () => {
    await started?.close();
  });

  const socket = async (who: string) => {
    const client = await started!.socket(who);
    sockets.push(client);
    return client;
  };
  const ok = (ack: { code: number; message?: string; data: unknown }, what: string) => {
    assert.equal(ack.code, 0, `${what}: ${ack.message}`);
    return ack.data as Record<string, unknown>;
  };
  const rest = async (who: string, path: string, body: object = {}) => {
    const res = await started!.api.call('POST', path, { as: who, body });
    assert.ok(res.status < 300, `${path}: ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, unknown>;
  };

  it('the hub handles exactly the declared events', () => {
    const declared = nodeWsProtocol.flatMap((p) => p.events.map((e) => e.event));
    assert.deepEqual([...started!.node.delivery.hub.events].sort(), declared.sort());
  });

  it('every ACK and frame of a meeting and a voice-room scenario matches its message', async () => {
    const { api } = started!;
    // ---- Meeting: anna hosts, bert joins; media, state, chat, kick, end. ----
    const created = await rest('anna', '/meeting/rooms', { title: '文档' });
    const code = (created.room as { room_code: string }).room_code;
    const rtpCapabilities = created.rtp_capabilities as Record<string, unknown>;
    const anna = await socket('anna');
    ok(await anna.request('meeting.room.join', { room_code: code }), 'join');
    await rest('bert', `/meeting/rooms/${code}/join`);
    const bert = await socket('bert');
    ok(await bert.request('meeting.room.join', { room_code: code }), 'bert join');
    await anna.waitFor((f) => f.event === 'meeting.member.joined');
    ok(
      await anna.request('meeting.member.state.changed', { room_code: code, hand_raised: true }),
      'state',
    );
    await bert.waitFor((f) => f.event === 'meeting.member.state.changed');

    const send = ok(
      await anna.request('meeting.transport.create', { room_code: code, direction: 'send' }),
      'transport',
    ).id as string;
    ok(
      await anna.request('meeting.transport.connect', {
        room_code: code,
        transport_id: send,
        dtls_parameters: CLIENT_DTLS,
      }),
      'connect',
    );
    const producerId = ok(
      await anna.request('meeting.produce.start', {
        room_code: code,
        transport_id: send,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(),
      }),
      'produce',
    ).producer_id as string;
    await bert.waitFor((f) => f.event === 'meeting.member.producer.new');
    const recv = ok(
      await bert.request('meeting.transport.create', { room_code: code, direction: 'recv' }),
      'recv',
    ).id as string;
    const consumerId = ok(
      await bert.request('meeting.consume.start', {
        room_code: code,
        transport_id: recv,
        producer_id: producerId,
        rtp_capabilities: rtpCapabilities,
      }),
      'consume',
    ).id as string;
    ok(await bert.request('meeting.consume.resume', { consumer_id: consumerId }), 'resume');
    // A late joiner's socket hears the live producer right after its ACK.
    const late = await socket('bert');
    ok(await late.request('meeting.room.join', { room_code: code }), 'late join');
    await late.waitFor((f) => f.event === 'meeting.member.producer.new');
    late.close();

    // Refusals: a bad payload, another member's state by a non-host, an unknown resource.
    const bad = await anna.request('meeting.room.join', { room_code: 17 });
    assert.deepEqual(
      [bad.code, bad.reason, bad.message],
      [-1, 'BAD_REQUEST', '参数错误: room_code: Invalid input: expected string, received number'],
    );
    const notHost = await bert.request('meeting.member.state.changed', {
      room_code: code,
      target_user_id: api.ids.anna,
      audio_enabled: false,
    });
    assert.deepEqual([notHost.code, notHost.reason], [-1, 'HOST_ONLY_WS']);
    const unknown = await bert.request('meeting.consume.resume', { consumer_id: 'nope' });
    assert.deepEqual([unknown.code, unknown.reason], [-1, 'MEDIA_RESOURCE_NOT_FOUND']);
    const outsider = await socket('carl');
    const notIn = await outsider.request('meeting.room.join', { room_code: code });
    assert.deepEqual([notIn.code, notIn.reason], [-1, 'NOT_IN_MEETING']);

    ok(
      await anna.request('meeting.producer.close', { room_code: code, producer_id: producerId }),
      'close',
    );
    await rest('anna', `/meeting/rooms/${code}/chats`, { content: '你好' });
    await bert.waitFor((f) => f.event === 'meeting.chat');
    ok(await bert.request('meeting.room.leave', { room_code: code }), 'leave');
    await anna.waitFor((f) => f.event === 'meeting.member.left' && f.data.reason === 'ws_leave');
    ok(await bert.request('meeting.room.join', { room_code: code }), 'rejoin');
    await rest('anna', `/meeting/rooms/${code}/kick`, { user_id: api.ids.bert });
    await bert.waitFor((f) => f.event === 'meeting.member.kicked');
    await anna.waitFor((f) => f.event === 'meeting.member.left' && f.data.reason === 'kicked');
    // An invite: carl's sockets hear `notification.new`.
    await rest('anna', `/meeting/rooms/${code}/invite`, { invitee_ids: [api.ids.carl] });
    await outsider.waitFor((f) => f.event === 'notification.new');
    await rest('anna', `/meeting/rooms/${code}/end`);
    await anna.waitFor((f) => f.event === 'meeting.room.ended');

    // ---- Voice room: anna owns it and takes seat 0, bert listens. ----
    const room = await rest('anna', '/voice/rooms', { title: '声音' });
    const roomId = room.room_id as string;
    const voiceAnna = await socket('anna');
    await rest('anna', `/voice/rooms/${roomId}/join`);
    ok(await voiceAnna.request('room.subscribe', { room_id: roomId }), 'subscribe');
    await rest('bert', `/voice/rooms/${roomId}/join`);
    await voiceAnna.waitFor((f) => f.event === 'voice.member.joined');
    await rest('anna', `/voice/rooms/${roomId}/mic/up`, { seat_index: 0 });
    await voiceAnna.waitFor((f) => f.event === 'voice.mic.up');
    ok(await voiceAnna.request('voice.media.join', { room_id: roomId }), 'media join');
    const voiceBert = await socket('bert');
    ok(await voiceBert.request('room.subscribe', { room_id: roomId }), 'bert subscribe');
    ok(await voiceBert.request('voice.media.join', { room_id: roomId }), 'bert media join');
    const voiceSend = ok(
      await voiceAnna.request('voice.transport.create', { room_id: roomId, direction: 'send' }),
      'voice transport',
    ).id as string;
    ok(
      await voiceAnna.request('voice.transport.connect', {
        room_id: roomId,
        transport_id: voiceSend,
        dtls_parameters: CLIENT_DTLS,
      }),
      'voice connect',
    );
    const voiceProducer = ok(
      await voiceAnna.request('voice.produce.start', {
        room_id: roomId,
        transport_id: voiceSend,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(22),
      }),
      'voice produce',
    ).producer_id as string;
    await voiceBert.waitFor((f) => f.event === 'voice.producer.new');
    const voiceRecv = ok(
      await voiceBert.request('voice.transport.create', { room_id: roomId, direction: 'recv' }),
      'voice recv',
    ).id as string;
    const media = await voiceBert.request('voice.media.join', { room_id: roomId });
    const voiceConsumer = ok(
      await voiceBert.request('voice.consume.start', {
        room_id: roomId,
        transport_id: voiceRecv,
        producer_id: voiceProducer,
        rtp_capabilities: (media.data as { rtp_capabilities: object }).rtp_capabilities,
      }),
      'voice consume',
    ).id as string;
    ok(await voiceBert.request('voice.consume.resume', { consumer_id: voiceConsumer }), 'resume');
    // Refusals: the audience may not produce, another app, a bad replay position.
    const bertSend = ok(
      await voiceBert.request('voice.transport.create', { room_id: roomId, direction: 'send' }),
      'bert send',
    ).id as string;
    const notOnSeat = await voiceBert.request('voice.produce.start', {
      room_id: roomId,
      transport_id: bertSend,
      kind: 'audio',
      rtp_parameters: opusRtpParameters(33),
    });
    assert.deepEqual([notOnSeat.code, notOnSeat.reason], [-1, 'NOT_ON_SEAT']);
    const otherApp = await voiceBert.request('room.subscribe', { room_id: roomId, app_code: 'x' });
    assert.deepEqual([otherApp.code, otherApp.reason], [-1, 'APP_MISMATCH']);
    const badSince = await voiceBert.request('room.subscribe', {
      room_id: roomId,
      since_event_id: 42,
    });
    assert.deepEqual(
      [badSince.code, badSince.reason, badSince.message],
      [-1, 'BAD_REQUEST', '参数错误: since_event_id'],
    );
    // A replay from the room's first version: the ACK carries the frames since.
    const replayed = ok(
      await voiceBert.request('room.subscribe', { room_id: roomId, since_version: 1 }),
      'replay',
    );
    assert.ok(Array.isArray(replayed.replay) || replayed.refetch === true);
    ok(
      await voiceAnna.request('voice.producer.close', {
        room_id: roomId,
        producer_id: voiceProducer,
      }),
      'voice close',
    );
    await rest('anna', `/voice/rooms/${roomId}/mic/down`);
    await voiceBert.waitFor((f) => f.event === 'voice.mic.released');
    ok(await voiceBert.request('room.unsubscribe', { room_id: roomId }), 'unsubscribe');
    await rest('anna', `/voice/rooms/${roomId}/kick`, { user_id: api.ids.bert });
    await voiceAnna.waitFor((f) => f.event === 'voice.member.kicked');
    await rest('anna', `/voice/rooms/${roomId}/close`);
    await voiceAnna.waitFor((f) => f.event === 'voice.room.closed');

    // ---- Every frame received against the document. ----
    const mismatches: string[] = [];
    const undocumented = new Set<string>();
    const seen = new Set<string>();
    let checked = 0;
    for (const client of sockets) {
      for (const frame of client.frames) {
        checked += 1;
        const candidates = validators.get(frame.event);
        if (!candidates) {
          undocumented.add(frame.event);
          continue;
        }
        const passed = candidates.find((c) => c.validate(frame));
        if (passed) {
          seen.add(passed.key);
          continue;
        }
        const why = candidates.map((c) => `${c.key}: ${JSON.stringify(c.validate.errors)}`);
        mismatches.push(`${JSON.stringify(frame).slice(0, 400)} → ${why.join(' | ')}`);
      }
    }
    // The schemas do refuse: an undeclared reason, a missing field, an extra key.
    const refusedAck = sockets[0]!.frames.find(
      (f) => f.event === 'meeting.room.join.ack' && f.code === -1,
    )!;
    const joinAck = validators.get('meeting.room.join.ack')!;
    for (const wrong of [
      { ...refusedAck, reason: 'NOT_A_REASON' },
      { ...refusedAck, message: undefined },
      { ...refusedAck, extra: 1 },
    ]) {
      assert.ok(!joinAck.some((c) => c.validate(JSON.parse(JSON.stringify(wrong)))), 'accepted');
    }
    assert.deepEqual([...undocumented], [], 'events the document does not list');
    assert.deepEqual(mismatches, [], 'frames that do not match their message');
    assert.ok(checked > 60, `only ${checked} frames checked`);
    // The scenario reached the kinds of messages it is meant to check.
    for (const key of [
      'ack.meeting.room.join',
      'ack.meeting.transport.create',
      'ack.meeting.consume.start',
      'ack.room.subscribe',
      'ack.voice.media.join',
      'frame.meeting.member.joined',
      'frame.meeting.member.left--ws_leave',
      'frame.meeting.member.producer.new',
      'frame.meeting.chat',
      'frame.meeting.member.kicked',
      'frame.notification.new',
      'frame.voice.member.joined',
      'frame.voice.member.kicked',
      'frame.voice.mic.up',
      'frame.voice.mic.released',
      'frame.voice.producer.new',
      'frame.voice.room.closed',
    ]) {
      assert.ok(seen.has(key), `no frame checked against ${key}`);
    }
  });
});
