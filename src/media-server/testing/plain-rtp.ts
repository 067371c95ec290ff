/**
 * Test-only: real RTP into the media server without a browser. A plain transport (comedia)
 * on a room's router, registered like any transport so that producers go through the HTTP
 * API, and a UDP socket that sends Opus-like packets carrying the ssrc-audio-level header
 * extension (what the speaker observers read).
 */
import dgram from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MediaServer } from '../server.js';

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
