/**
 * Test-only: real RTP into the media server without a browser. A plain transport (comedia)
 * on a room's router, registered like any transport so that producers go through the HTTP
 * API, and a UDP socket that sends Opus-like packets carrying the ssrc-audio-level header
 * extension (what the speaker observers read).
 */
import dgram from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MediaServer } from '../server.js';
import { call } from './harness.js';

/** The audio-level extension's id in {@link opusLevelRtpParameters}. */
const AUDIO_LEVEL_EXT_ID = 1;
const OPUS_PAYLOAD_TYPE = 111;

/** A plain RTP transport on the room's router; the port is where to send RTP. */
export async function plainSendTransport(
  server: MediaServer,
  roomCode: string,
  peerId: string | null,
): Promise<{ id: string; port: number }> {
  const { registry } = server;
  const { transport } = await registry.createPlainTransport(
    registry.routerOfRoom(roomCode),
    peerId,
  );
  return { id: transport.id, port: transport.tuple.localPort };
}

/**
 * A seat on the room's (origin) router: a plain sending transport, an Opus producer on it,
 * and the RTP sender that feeds it (closed by the caller).
 */
export async function plainSeat(
  server: MediaServer,
  roomCode: string,
  peerId: string,
  ssrc: number,
): Promise<{ producerId: string; sender: RtpSender }> {
  const { id, port } = await plainSendTransport(server, roomCode, peerId);
  const { producer } = await server.registry.createProducer(
    id,
    'audio',
    opusLevelRtpParameters(ssrc) as never,
    false,
  );
  return { producerId: producer.id, sender: new RtpSender(port, ssrc) };
}

/** An Opus producer's RTP parameters with the audio-level extension. */
export function opusLevelRtpParameters(ssrc: number) {
  return {
    codecs: [
      {
        mimeType: 'audio/opus',
        payloadType: OPUS_PAYLOAD_TYPE,
        clockRate: 48000,
        channels: 2,
        rtcpFeedback: [],
      },
    ],
    headerExtensions: [
      { uri: 'urn:ietf:params:rtp-hdrext:ssrc-audio-level', id: AUDIO_LEVEL_EXT_ID },
    ],
    encodings: [{ ssrc }],
    rtcp: { cname: 'plain-rtp', reducedSize: true },
  };
}

/** Sends RTP for one SSRC; sequence and timestamp carry on across {@link RtpSender.send}. */
export class RtpSender {
  readonly #socket = dgram.createSocket('udp4');
  #seq = 0;
  #timestamp = 0;

  constructor(
    private readonly port: number,
    private readonly ssrc: number,
  ) {}

  /** `count` packets 20 ms apart, at `dbov` below full scale (0 loudest, 127 silence). */
  async send(count: number, dbov = 10): Promise<void> {
    for (let i = 0; i < count; i++) {
      const header = Buffer.alloc(12);
      header[0] = 0x90; // version 2, header extension present
      header[1] = OPUS_PAYLOAD_TYPE;
      header.writeUInt16BE(this.#seq++ & 0xffff, 2);
      header.writeUInt32BE((this.#timestamp += 960) >>> 0, 4);
      header.writeUInt32BE(this.ssrc, 8);
      // RFC 8285 one-byte extension block: one element (id, length 1) with the level, padded.
      const extension = Buffer.from([
        0xbe,
        0xde,
        0x00,
        0x01,
        (AUDIO_LEVEL_EXT_ID << 4) | 0,
        0x80 | dbov,
        0,
        0,
      ]);
      const packet = Buffer.concat([header, extension, Buffer.alloc(40, 0xf8)]);
      await new Promise<void>((resolve, reject) =>
        this.#socket.send(packet, this.port, '127.0.0.1', (error) =>
          error ? reject(error) : resolve(),
        ),
      );
      await sleep(20);
    }
  }

  close(): void {
    this.#socket.close();
  }
}

/**
 * A listener without a browser: a plain RTP receiving transport placed like any listener's
 * (`onRouterFor(room, 'recv', …)`), sending what it consumes to a local UDP socket that counts
 * the packets. `consume` takes a room producer's id, as the signalling would.
 */
export class PlainListener {
  readonly #socket = dgram.createSocket('udp4');
  #packets = 0;
  #left = false;

  private constructor(
    private readonly server: MediaServer,
    readonly peerId: string,
    readonly transportId: string,
    readonly routerId: string,
  ) {
    this.#socket.on('message', () => this.#packets++);
  }

  static async join(server: MediaServer, roomCode: string, peerId: string) {
    const { registry } = server;
    const { transport, routerEntry } = await registry.onRouterFor(roomCode, 'recv', (router) =>
      registry.createPlainTransport(router, peerId, 'recv'),
    );
    const listener = new PlainListener(server, peerId, transport.id, routerEntry.router.id);
    await new Promise<void>((resolve) => listener.#socket.bind(0, '127.0.0.1', resolve));
    await transport.connect({ ip: '127.0.0.1', port: listener.#socket.address().port });
    return listener;
  }

  /** Consumes (and resumes) one producer of the room; the consumer's id. */
  async consume(producerId: string): Promise<string> {
    const { registry } = this.server;
    const { routerEntry } = registry.transport(this.transportId);
    const origin = registry.routerOfRoom(routerEntry.roomCode);
    const { consumer } = await registry.createConsumer(
      this.transportId,
      producerId,
      origin.router.rtpCapabilities,
    );
    await consumer.resume();
    return consumer.id;
  }

  /** RTP packets received so far. */
  get packets(): number {
    return this.#packets;
  }

  /** Leaves: its transport closes (its router may linger and close if it was an edge's last). */
  leave(): void {
    if (this.#left) return;
    this.#left = true;
    try {
      this.server.registry.closeTransport(this.transportId);
    } catch {
      /* already closed, with its router */
    }
    this.#socket.close();
  }
}

/**
 * A listener without a browser that joins over the internal HTTP API, as a node would: a
 * plain receiving transport asked for by room code (placed by the server, possibly on an
 * edge of the room on another media server, whose calls the room's server forwards),
 * connected to a local UDP socket that counts packets, or to a given local port.
 */
export class HttpPlainListener {
  readonly #socket: dgram.Socket | null;
  #packets = 0;
  #left = false;

  private constructor(
    private readonly server: { url: string },
    private readonly token: string,
    readonly peerId: string,
    readonly transportId: string,
    readonly routerId: string,
    ownSocket: boolean,
  ) {
    this.#socket = ownSocket ? dgram.createSocket('udp4') : null;
    this.#socket?.on('message', (msg) => {
      if (!isRtcp(msg)) this.#packets++;
    });
  }

  /** Joins; `port`: where its RTP goes (else a socket of its own, counted in `packets`). */
  static async join(
    server: { url: string },
    token: string,
    roomCode: string,
    peerId: string,
    port?: number,
  ) {
    const made = await callOk<{ id: string; router_id: string }>(server, token, '/transports', {
      room_code: roomCode,
      direction: 'recv',
      peer_id: peerId,
      type: 'plain',
    });
    const own = port === undefined;
    const listener = new HttpPlainListener(server, token, peerId, made.id, made.router_id, own);
    const socket = listener.#socket;
    if (socket) await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const to = socket ? socket.address().port : port;
    await callOk(server, token, `/transports/${made.id}/connect`, { ip: '127.0.0.1', port: to });
    return listener;
  }

  /** Consumes (and resumes) one producer of the room; the consumer's id. */
  async consume(producerId: string, rtpCapabilities: unknown): Promise<string> {
    const { server, token } = this;
    const consumer = await callOk<{ id: string; producerId: string }>(server, token, '/consumers', {
      transport_id: this.transportId,
      producer_id: producerId,
      rtp_capabilities: rtpCapabilities,
    });
    if (consumer.producerId !== producerId) throw new Error(`consumer of ${consumer.producerId}`);
    await callOk(server, token, `/consumers/${consumer.id}/resume`, {});
    return consumer.id;
  }

  /** RTP packets received so far (RTCP, such as the consumers' sender reports, not counted). */
  get packets(): number {
    return this.#packets;
  }

  /** Leaves: its transport closes, through the server it joined at. */
  async leave(): Promise<void> {
    if (this.#left) return;
    this.#left = true;
    const path = `/internal/v1/transports/${this.transportId}/close`;
    await call(this.server, 'POST', path, {}, this.token).catch(() => undefined);
    this.#socket?.close();
  }
}

/** A POST to `/internal/v1<path>` whose 2xx answer's data is returned; else it throws. */
async function callOk<T = unknown>(
  server: { url: string },
  token: string,
  path: string,
  body: unknown,
): Promise<T> {
  const { status, body: answer } = await call<T>(
    server,
    'POST',
    `/internal/v1${path}`,
    body,
    token,
  );
  if (status >= 300) throw new Error(`${path}: ${status} ${answer.message}`);
  return answer.data;
}

/** RTCP rather than RTP (RFC 5761: packet types 192-223 read as payload types 64-95). */
function isRtcp(msg: Buffer): boolean {
  const type = (msg[1] ?? 0) & 0x7f;
  return type >= 64 && type <= 95;
}
