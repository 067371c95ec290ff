/**
 * The media records follow the media server: a producer that closes there without the
 * signalling (its transport, router or worker went away) is announced closed to the room
 * once, and a member who joins afterwards is not offered it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MeetingClient } from '../meeting/api/testing/meeting-client.js';
import { mediaSkipReason, opusRtpParameters } from '../media-server/testing/harness.js';
import type { RoomsNode } from '../main/node.js';
import { startMeetingNode, type MeetingNode } from '../main/testing/meeting-node.js';

describe('media records follow the media server', { skip: mediaSkipReason() }, () => {
  let started: MeetingNode | undefined;
  let node: RoomsNode;
  let api: MeetingClient;

  before(async () => {
    started = await startMeetingNode(['host', 'guest', 'late']);
    ({ node, api } = started);
  });
  after(async () => {
    await started?.close();
  });

  it('a producer closed on the media server is announced once and offered to nobody', async () => {
    const ok = (ack: { code: number; message?: string; data: unknown }) => {
      assert.equal(ack.code, 0, ack.message);
      return ack.data as Record<string, unknown>;
    };
    const created = await api.call('POST', '/meeting/rooms', { as: 'host', body: { title: 'r' } });
    const code = created.body.data.room.room_code as string;
    for (const who of ['guest', 'late']) {
      await api.call('POST', `/meeting/rooms/${code}/join`, { as: who, body: {} });
    }
    const host = await started!.socket('host');
    const guest = await started!.socket('guest');
    for (const s of [host, guest]) ok(await s.request('meeting.room.join', { room_code: code }));
    const send = ok(
      await host.request('meeting.transport.create', { room_code: code, direction: 'send' }),
    ).id as string;
    const producerId = ok(
      await host.request('meeting.produce.start', {
        room_code: code,
        transport_id: send,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(31337),
      }),
    ).producer_id as string;
    const about = (closed: boolean) => (f: { event: string; data: Record<string, unknown> }) =>
      f.event === 'meeting.member.producer.new' &&
      f.data.producer_id === producerId &&
      f.data.closed === closed;
    await guest.waitFor(about(false));

    // Closed on the media server directly, as when its transport or worker goes away.
    await node.media.orchestrator!.closeProducer(producerId);
    await guest.waitFor(about(true));
    await sleep(800);
    assert.equal(guest.frames.filter(about(true)).length, 1, 'announced once');

    // A member who joins now is offered no producer.
    const late = await started!.socket('late');
    ok(await late.request('meeting.room.join', { room_code: code }));
    await sleep(300);
    assert.deepEqual(
      late.frames.filter((f) => f.event === 'meeting.member.producer.new'),
      [],
    );
  });
});
