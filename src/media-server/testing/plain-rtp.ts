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
