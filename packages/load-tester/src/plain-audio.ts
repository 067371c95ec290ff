/**
 * `--media`: real audio through the target's media server without a browser, for a target
 * whose media server runs on this machine with `ROOMS_MEDIA_PLAIN_RTP` on. Speakers send
 * Opus-shaped RTP (a packet per 20 ms) on plain send transports; every listener consumes
 * each announced audio producer on a plain recv transport into a local UDP socket.
 *
 * Each packet's payload carries its producer's tag and its index, untouched by the media
 * server (which rewrites SSRCs and sequence numbers), so a listener knows exactly which
 * packets reached it. What a listener is owed of a producer: every packet sent after its
 * consumer's resume was acknowledged; packets that came before count for nothing.
 */
import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RealtimeClient } from '../../client/src/index.js';
import type { Recorder } from './recorder.js';

const OPUS_PAYLOAD_TYPE = 111;
const PACKET_MS = 20;
/** Our payloads: an Opus TOC byte (20 ms CELT, as a real frame starts), then this marker. */
const TOC = 0xf8;
const MARKER = 0x4c54; // "LT"
const PAYLOAD_BYTES = 40;

/** What a client asks to consume: Opus only, no header extensions. */
const RTP_CAPABILITIES = {
  codecs: [
    {
      kind: 'audio',
      mimeType: 'audio/opus',
      preferredPayloadType: 100,
      clockRate: 48000,
      channels: 2,
      rtcpFeedback: [],
    },
  ],
  headerExtensions: [],
};

/** A room as the kind's media events name it. */
export interface MediaRoom {
  /** `voice` or `meeting`: the events' prefix. */
  readonly prefix: 'voice' | 'meeting';
  /** The payload key of the room: `room_id` or `room_code`. */
  readonly field: 'room_id' | 'room_code';
  readonly id: string;
}

/** Producers' tags and how many packets each has sent (speakers count, listeners read). */
export class MediaLedger {
  private readonly counters = new Map<string, { sent: number }>();
  private readonly tags = new Map<number, string>();

  /** The counter the producer's sender adds each packet to. */
  register(producerId: string, tag: number): { sent: number } {
    const counter = { sent: 0 };
    this.counters.set(producerId, counter);
    this.tags.set(tag, producerId);
    return counter;
  }

  producerOf(tag: number): string | undefined {
    return this.tags.get(tag);
  }

  /** Packets of `producerId` sent so far (0 for one not yet sending). */
  sent(producerId: string): number {
    return this.counters.get(producerId)?.sent ?? 0;
  }
}

/** The kind's media event `name` about `room` (the kind is the run's choice: typed loosely). */
function ask<T = Record<string, unknown>>(
  client: RealtimeClient,
  room: MediaRoom,
  name: string,
  data: Record<string, unknown>,
): Promise<T> {
  const event: string = `${room.prefix}.${name}`;
  return client.request<T>(event, { [room.field]: room.id, ...data });
}

/** A user's plain send transport, producing one audio track at a time. */
export class PlainSpeaker {
  private readonly socket = dgram.createSocket('udp4');
  private transport: Promise<{ id: string; port: number }> | null = null;

  constructor(
    private readonly client: RealtimeClient,
    private readonly room: MediaRoom,
    private readonly ledger: MediaLedger,
  ) {}

  /** Opens an audio producer (its transport the first time); its id and its sender. */
  async produce(): Promise<{ producerId: string; talk: (ms: number) => Promise<void> }> {
    this.transport ??= ask<{ id: string; port: number }>(
      this.client,
      this.room,
      'transport.plain.create',
      { direction: 'send' },
    ).catch((error: unknown) => {
      this.transport = null;
      throw error;
    });
    const { id, port } = await this.transport;
    const ssrc = randomInt(1, 2 ** 31);
    const { producer_id: producerId } = await ask<{ producer_id: string }>(
      this.client,
      this.room,
      'produce.start',
      {
        transport_id: id,
        kind: 'audio',
        rtp_parameters: {
          codecs: [
            {
              mimeType: 'audio/opus',
              payloadType: OPUS_PAYLOAD_TYPE,
              clockRate: 48000,
              channels: 2,
              rtcpFeedback: [],
            },
          ],
          encodings: [{ ssrc }],
          rtcp: { cname: `load-${ssrc}`, reducedSize: true },
        },
      },
    );
    const tag = randomInt(1, 2 ** 31);
    const counter = this.ledger.register(producerId, tag);
    const talk = (ms: number) => this.send(port, ssrc, tag, counter, ms);
    return { producerId, talk };
  }

  /** A packet every 20 ms for `ms`, on schedule (a late tick sends what it owes). */
  private async send(
    port: number,
    ssrc: number,
    tag: number,
    counter: { sent: number },
    ms: number,
  ) {
    const start = performance.now();
    const count = Math.max(1, Math.round(ms / PACKET_MS));
    for (let n = 0; n < count; n++) {
      const due = start + n * PACKET_MS - performance.now();
      if (due > 0) await sleep(due);
      const packet = Buffer.alloc(12 + PAYLOAD_BYTES);
      packet[0] = 0x80; // version 2
      packet[1] = OPUS_PAYLOAD_TYPE;
      packet.writeUInt16BE(n & 0xffff, 2);
      packet.writeUInt32BE((n * 960) >>> 0, 4);
      packet.writeUInt32BE(ssrc, 8);
      packet[12] = TOC;
      packet.writeUInt16BE(MARKER, 13);
      packet.writeUInt32BE(tag, 15);
      packet.writeUInt32BE(n, 19);
      counter.sent++;
      this.socket.send(packet, port, '127.0.0.1');
    }
  }

  close(): void {
    this.socket.close();
  }
}

interface Consumption {
  readonly announcedAt: number;
  /** Packets sent before the resume was acknowledged (null until then). */
  base: number | null;
  /** Indexes that came before `base` was known. */
  early: number[];
  got: number;
  /** Whether a packet of it came yet (the first one is timed). */
  heard: boolean;
}

/**
 * A user's plain recv transport: consumes every audio producer of the others announced
 * from now on, and counts the packets each one owes it.
 */
export class PlainListener {
  private readonly socket = dgram.createSocket('udp4');
  private readonly consumptions = new Map<string, Consumption>();
  private transportId = '';

  private constructor(
    private readonly client: RealtimeClient,
    private readonly room: MediaRoom,
    private readonly ledger: MediaLedger,
    private readonly recorder: Recorder,
  ) {
    this.socket.on('message', (packet) => this.received(packet));
  }

  static async open(
    client: RealtimeClient,
    room: MediaRoom,
    self: number,
    ledger: MediaLedger,
    recorder: Recorder,
  ): Promise<PlainListener> {
    const listener = new PlainListener(client, room, ledger, recorder);
    try {
      await listener.start(self);
    } catch (error) {
      listener.socket.close();
      throw error;
    }
    return listener;
  }

  /**
   * Hears of producers from now on (consumed once the transport is connected), then opens
   * the transport; a voice room's member first joins its media (the room's router, and the
   * producers live already).
   */
  private async start(self: number): Promise<void> {
    let connected!: () => void;
    const ready = new Promise<void>((resolve) => (connected = resolve));
    const announced = (producer: { user_id: unknown; producer_id: string; kind: string }) => {
      if (producer.kind !== 'audio' || Number(producer.user_id) === self) return;
      const announcedAt = performance.now();
      void ready.then(() => this.consume(producer.producer_id, announcedAt));
    };
    const { client, room } = this;
    const event = room.prefix === 'voice' ? 'voice.producer.new' : 'meeting.member.producer.new';
    client.on<{ user_id: number; producer_id: string; kind: string; closed: boolean }>(
      event,
      ({ data }) => {
        if (!data.closed) announced(data);
      },
    );
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
    if (room.prefix === 'voice') {
      const joined = await ask<{
        producers: { user_id: number; producer_id: string; kind: string }[];
      }>(client, room, 'media.join', {});
      for (const producer of joined.producers) announced(producer);
    }
    const made = await ask<{ id: string }>(client, room, 'transport.plain.create', {
      direction: 'recv',
    });
    this.transportId = made.id;
    await ask(client, room, 'transport.plain.connect', {
      transport_id: made.id,
      ip: '127.0.0.1',
      port: this.socket.address().port,
    });
    connected();
  }

  private async consume(producerId: string, announcedAt: number): Promise<void> {
    if (this.consumptions.has(producerId)) return;
    const consumption: Consumption = {
      announcedAt,
      base: null,
      early: [],
      got: 0,
      heard: false,
    };
    this.consumptions.set(producerId, consumption);
    const consumer = await this.recorder.time('consume', () =>
      ask<{ id: string }>(this.client, this.room, 'consume.start', {
        transport_id: this.transportId,
        producer_id: producerId,
        rtp_capabilities: RTP_CAPABILITIES,
      }),
    );
    // The resume names the consumer alone, no room.
    const resumed =
      consumer &&
      (await this.recorder.time('consume_resume', () =>
        this.client.request(`${this.room.prefix}.consume.resume`, {
          consumer_id: consumer.id,
        }),
      ));
    if (resumed === undefined) {
      this.consumptions.delete(producerId); // counted as an error: owes nothing
      return;
    }
    const base = this.ledger.sent(producerId);
    consumption.base = base;
    consumption.got += consumption.early.filter((n) => n >= base).length;
    consumption.early = [];
  }

  private received(packet: Buffer): void {
    const at = payloadStart(packet);
    if (at < 0 || packet[at] !== TOC || packet.readUInt16BE(at + 1) !== MARKER) return;
    const producerId = this.ledger.producerOf(packet.readUInt32BE(at + 3));
    const consumption = producerId && this.consumptions.get(producerId);
    if (!consumption) return;
    const n = packet.readUInt32BE(at + 7);
    if (!consumption.heard) {
      consumption.heard = true;
      this.recorder.firstAudio.push(performance.now() - consumption.announcedAt);
    }
    if (consumption.base === null) consumption.early.push(n);
    else if (n >= consumption.base) consumption.got++;
  }

  /** Adds what this listener was owed and got to the recorder; closes its socket. */
  settle(): void {
    for (const [producerId, consumption] of this.consumptions) {
      if (consumption.base === null) continue;
      this.recorder.packetsOwed += this.ledger.sent(producerId) - consumption.base;
      this.recorder.packetsGot += consumption.got;
    }
    this.socket.close();
  }
}

/** Where an RTP packet's payload starts (after CSRCs and a header extension); -1: not RTP. */
function payloadStart(packet: Buffer): number {
  if (packet.length < 12 || packet[0]! >> 6 !== 2) return -1;
  let at = 12 + (packet[0]! & 0x0f) * 4;
  if (packet[0]! & 0x10) {
    if (packet.length < at + 4) return -1;
    at += 4 + packet.readUInt16BE(at + 2) * 4;
  }
  return packet.length >= at + 11 ? at : -1;
}

/** A room's audio in a `--media` run: its listeners and speakers, and their ledger. */
export class RoomAudio {
  private readonly ledger = new MediaLedger();
  private readonly listeners: PlainListener[] = [];
  private readonly speakers = new Map<number, PlainSpeaker>();

  constructor(
    private readonly room: MediaRoom,
    private readonly recorder: Recorder,
  ) {}

  /** `userId` hears every audio producer of the others announced from now on. */
  async listen(client: RealtimeClient, userId: number): Promise<void> {
    const opened = await this.recorder.time('listen', () =>
      PlainListener.open(client, this.room, userId, this.ledger, this.recorder),
    );
    if (opened) this.listeners.push(opened);
  }

  /** `userId`'s speaker (one send transport for all of its producers). */
  speaker(client: RealtimeClient, userId: number): PlainSpeaker {
    let speaker = this.speakers.get(userId);
    if (!speaker)
      this.speakers.set(userId, (speaker = new PlainSpeaker(client, this.room, this.ledger)));
    return speaker;
  }

  /** After the traffic and a moment for the last packets: what was owed and got. */
  settle(): void {
    for (const listener of this.listeners) listener.settle();
    for (const speaker of this.speakers.values()) speaker.close();
  }
}
