/**
 * Plain RTP transports over the signalling (`meeting.transport.plain.*`), on a real media
 * server listening on every address: off unless the deployment turns them on; on, a
 * member's RTP reaches another member's UDP socket through the media server; and what a
 * hostile member tries is refused: an address off this host, someone else's transport, the
 * wrong direction, a second connect, more than the caps (nothing made past them); a closed
 * socket's plain transports are released.
 */
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before, describe, it } from 'node:test';
import type { MediaServer } from '../../media-server/server.js';
import {
  mediaSkipReason,
  opusRtpParameters,
  startTestMediaServer,
} from '../../media-server/testing/harness.js';
import { DEFAULT_MEDIA_CAPS } from '../../edge/room-media/media-admission.js';
import type { Frame, TestClient } from '../../edge/ws/testing/ws-client.js';
import { mediaRoom, meetingCode, startStack, type Stack } from './testing/stack.js';

/** RTC ports of this file's own (no other media test uses them). */
const PORTS = { rtcMinPort: 38_940, rtcMaxPort: 38_969 };

const ok = (ack: Frame) => {
  assert.equal(ack.code, 0, `${ack.event}: ${ack.message}`);
  return ack.data;
};

/** An RTP packet of `ssrc` (Opus, payload type 111) whose payload ends with `n`. */
function rtp(ssrc: number, n: number): Buffer {
  const packet = Buffer.alloc(12 + 24);
  packet[0] = 0x80;
  packet[1] = 111;
  packet.writeUInt16BE(n, 2);
  packet.writeUInt32BE(n * 960, 4);
  packet.writeUInt32BE(ssrc, 8);
  packet[12] = 0xf8;
  packet.writeUInt32BE(n, 32);
  return packet;
}

void describe('meeting signalling: plain RTP transports', { skip: mediaSkipReason() }, () => {
  let server: MediaServer;
  /** Each test's stack and its meeting: one each. */
  const opened: { stack: Stack; code: string }[] = [];

  before(async () => {
    // Listening on every address, as a server behind NAT does: plain RTP must stay on loopback.
    server = await startTestMediaServer({
      ...PORTS,
      listenIp: '0.0.0.0',
      announcedAddress: '127.0.0.1',
    });
  });
  after(async () => {
    await server?.close();
  });
  afterEach(async () => {
    for (const { stack, code } of opened.splice(0)) {
      await stack.media.closeRouter(mediaRoom(code)).catch(() => null);
      await stack.close();
    }
  });

  const start = async (plainRtp: boolean, ...users: [string, ...string[]]) => {
    const stack = await startStack(server, { plainRtp });
    const code = meetingCode();
    opened.push({ stack, code });
    stack.membership.add(code, ...users);
    await stack.media.createRouter(mediaRoom(code));
    const clients: TestClient[] = [];
    for (const user of users) {
      const client = await stack.connect(user);
      ok(await client.request('meeting.room.join', { room_code: code }));
      clients.push(client);
    }
    return { stack, code, clients };
  };
  const plain = (client: TestClient, code: string, direction: 'send' | 'recv') =>
    client.request('meeting.transport.plain.create', { room_code: code, direction });

  void it('is off by default: refused, and nothing made on the media server', async () => {
    const { code, clients } = await start(false, '16');
    const ack = await plain(clients[0]!, code, 'recv');
    assert.deepEqual(
      [ack.code, ack.reason, ack.message],
      [-1, 'MEDIA_PLAIN_RTP_OFF', 'plain RTP transports are off here (ROOMS_MEDIA_PLAIN_RTP)'],
    );
    const connect = await clients[0]!.request('meeting.transport.plain.connect', {
      room_code: code,
      transport_id: 'anything',
      ip: '127.0.0.1',
      port: 5004,
    });
    assert.equal(connect.reason, 'MEDIA_PLAIN_RTP_OFF');
    assert.equal(server.registry.stats.transports, 0);
  });

  void it('carries one member’s RTP to another’s UDP socket, on loopback only', async () => {
    const { code, clients } = await start(true, '16', '30');
    const [speaker, listener] = clients as [TestClient, TestClient];
    const send = ok(await plain(speaker, code, 'send')) as { id: string; ip: string; port: number };
    assert.equal(send.ip, '127.0.0.1', 'a plain transport listens on loopback, not 0.0.0.0');
    const recv = ok(await plain(listener, code, 'recv')) as { id: string };
    const socket = dgram.createSocket('udp4');
    const got: number[] = [];
    socket.on('message', (packet: Buffer) => {
      // RTCP comes on the same port (rtcp-mux): packet types 200-206 where RTP has its marker and payload type.
      if (packet[1]! < 192 || packet[1]! > 223) got.push(packet.readUInt32BE(packet.length - 4));
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    try {
      ok(
        await listener.request('meeting.transport.plain.connect', {
          room_code: code,
          transport_id: recv.id,
          ip: '127.0.0.1',
          port: socket.address().port,
        }),
      );
      const { producer_id } = ok(
        await speaker.request('meeting.produce.start', {
          room_code: code,
          transport_id: send.id,
          kind: 'audio',
          rtp_parameters: opusRtpParameters(4242),
        }),
      ) as { producer_id: string };
      await listener.waitFor(
        (f) => f.event === 'meeting.member.producer.new' && f.data.producer_id === producer_id,
      );
      const consumer = ok(
        await listener.request('meeting.consume.start', {
          room_code: code,
          transport_id: recv.id,
          producer_id,
          rtp_capabilities: server.registry.routerOfRoom(mediaRoom(code)).router.rtpCapabilities,
        }),
      ) as { id: string };
      ok(await listener.request('meeting.consume.resume', { consumer_id: consumer.id }));
      const sender = dgram.createSocket('udp4');
      for (let n = 1; n <= 25; n++) {
        sender.send(rtp(4242, n), send.port, '127.0.0.1');
        await sleep(20);
      }
      sender.close();
      await sleep(300);
      assert.deepEqual(
        got,
        Array.from({ length: 25 }, (_, i) => i + 1),
      );
    } finally {
      socket.close();
    }
  });

  void it('refuses what a hostile member tries, and caps and releases plain transports', async () => {
    const { stack, code, clients } = await start(true, '16', '30');
    const [member, other] = clients as [TestClient, TestClient];
    const recv = ok(await plain(member, code, 'recv')) as { id: string };
    const send = ok(await plain(member, code, 'send')) as { id: string };
    const connect = (client: TestClient, transport_id: string, ip: string, port: unknown) =>
      client.request('meeting.transport.plain.connect', {
        room_code: code,
        transport_id,
        ip,
        port,
      });

    // Only this host may receive: any other address, or no address, is bad input.
    for (const [ip, port] of [
      ['10.0.0.1', 5004],
      ['0.0.0.0', 5004],
      ['example.com', 5004],
      ['127.0.0.1', 0],
      ['127.0.0.1', '5004'],
      ['127.0.0.1', 5004.5],
    ] as const) {
      const ack = await connect(member, recv.id, ip, port);
      assert.equal(ack.reason, 'BAD_REQUEST', `${ip}:${String(port)}: ${ack.message}`);
      assert.match(ack.message!, /^参数错误: (ip|port): /);
    }
    // Connected once: a second connect is refused (the media server's state), not retried.
    assert.equal((await connect(member, recv.id, '127.0.0.1', 5004)).code, 0);
    const again = await connect(member, recv.id, '127.0.0.1', 5006);
    assert.deepEqual(
      [again.reason, again.message],
      [
        'MEDIA_ORCHESTRATOR_ERROR',
        'mediaOrchestrator error: connect() already called [method:plainTransport.connect]',
      ],
    );
    // Someone else's transport is, for this caller, unknown; a send transport is the wrong kind.
    assert.equal(
      (await connect(other, recv.id, '127.0.0.1', 5004)).reason,
      'MEDIA_RESOURCE_NOT_FOUND',
    );
    assert.equal(
      (await connect(member, send.id, '127.0.0.1', 5004)).reason,
      'MEDIA_WRONG_DIRECTION',
    );

    // Counted with the WebRTC ones: the user's cap holds.
    const cap = DEFAULT_MEDIA_CAPS.perUser.transports;
    const more = await Promise.all(Array.from({ length: cap }, () => plain(member, code, 'recv')));
    const answers = more.map((a) => a.reason ?? 'ok').join(', ');
    assert.equal(more.filter((a) => a.code === 0).length, cap - 2, answers);
    assert.deepEqual(
      [...new Set(more.filter((a) => a.code !== 0).map((a) => a.reason))],
      ['MEDIA_USER_LIMIT'],
    );
    assert.equal(server.registry.stats.transports, cap, 'nothing was made past the cap');

    // The socket's close releases them all on the media server, then forgets their records
    // (in that order: the server's count reaches 0 before the records go).
    member.close();
    const held = async () =>
      (await stack.state.resources({ appCode: 'default', roomId: code }, '16')).transports;
    await waitUntil(() => server.registry.stats.transports === 0);
    await waitUntil(async () => (await held()).length === 0);
  });
});

async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not so after ${timeoutMs} ms: ${String(check)}`);
    await sleep(20);
  }
}
