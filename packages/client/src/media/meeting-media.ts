/**
 * A meeting's audio and video with mediasoup-client, in the seed's order (meeting-api.md
 * §4 and the WebSocket contract): `Device.load(rtp_capabilities)` → `meeting.room.join` →
 * a send and a recv transport (`meeting.transport.create`, `.connect` in their 'connect'
 * event) → camera and microphone produced (`meeting.produce.start` in 'produce') → every
 * other member's producer consumed on `meeting.member.producer.new {closed: false}`
 * (`meeting.consume.start`: created paused by the server) → `meeting.consume.resume` once
 * the page has attached the track to its media element (`attached`).
 *
 * After a reconnect (`prepare`, join, `start` again), the old socket's resources are gone on
 * the server (its close released them; the reconnect named it in `replaces`, so it closed at
 * once): the device stays, the transports, producers and
 * consumers are made again on the new socket, with the same local tracks.
 *
 * `meeting.media.reset {room_code, router_id, rtp_capabilities}` (the meeting's media server
 * died and its router is on another one now) is handled here, without a page reload: the
 * transports, producers and consumers of the dead server are dropped, the device loads the
 * new router's capabilities, and the same steps as after a reconnect run again
 * (`meeting.room.join` lists the producers the others already made again).
 */
import { Device } from 'mediasoup-client';
import type { Consumer, Producer, Transport } from 'mediasoup-client/types';
import { ChangeListeners } from './changes.js';
import type { MediaDevice, MediaFrame, MediaSocket } from './ports.js';
import { backoff, CONSUME_ATTEMPTS, mayPass, RETRY_MS, RetryTimers } from './retry.js';
import { MICROPHONE_OPUS, signalled } from './transports.js';
import { CAMERA_SIMULCAST } from './camera-layers.js';

/** What a member sends, as the page shows it (replaced, never mutated, at a change). */
export interface RemoteMedia {
  readonly audio: MediaStream | null;
  readonly video: MediaStream | null;
  readonly audioConsumerId: string | null;
  readonly videoConsumerId: string | null;
  /** The member's shared screen (video), and its sound when the browser gave one. */
  readonly screen?: MediaStream | null;
  readonly screenConsumerId?: string | null;
  readonly screenAudio?: MediaStream | null;
  readonly screenAudioConsumerId?: string | null;
}

/** What a producer carries (`meeting.member.producer.new`'s `source`). */
export type MediaSource = 'microphone' | 'camera' | 'screen' | 'screen_audio';

/** Where each source's stream is shown in {@link RemoteMedia}. */
const SLOTS = {
  microphone: ['audio', 'audioConsumerId'],
  camera: ['video', 'videoConsumerId'],
  screen: ['screen', 'screenConsumerId'],
  screen_audio: ['screenAudio', 'screenAudioConsumerId'],
} as const satisfies Record<MediaSource, readonly [keyof RemoteMedia, keyof RemoteMedia]>;

/**
 * How a page shows one member's video: the tile's width in device pixels (the server
 * forwards the smallest simulcast layer that covers it) and whether anyone sees it at all.
 */
export interface TileView {
  readonly maxWidth: number;
  readonly visible: boolean;
}

export { CAMERA_SIMULCAST };

/** A meeting's router, from its join's ACK or `meeting.media.reset`. */
export interface MeetingRouter {
  readonly router_id: string | null;
  readonly rtp_capabilities: unknown;
}

export interface MeetingMediaOptions {
  readonly roomCode: string;
  /** The caller: its own producers are not consumed. */
  readonly selfId: number;
  /** A failure to show (a consumer given up, a failed reset, a refused resume). */
  readonly onError: (message: string) => void;
  /**
   * The meeting's router moved (`meeting.media.reset`), before the device loads it: a page
   * that loads its device from kept capabilities after a reload keeps these instead.
   */
  readonly onRouter?: (router: MeetingRouter) => void;
  /** Makes the device (a scripted one in tests). */
  readonly makeDevice?: () => MediaDevice;
}

interface TransportInfo {
  id: string;
  iceParameters: never;
  iceCandidates: never;
  dtlsParameters: never;
  /** TURN servers with time-limited credentials, when the deployment has them. */
  iceServers: RTCIceServer[];
}

interface ConsumerInfo {
  id: string;
  producerId: string;
  kind: 'audio' | 'video';
  rtpParameters: never;
}

interface Waiting {
  producerId: string;
  userId: number;
  source: MediaSource;
  generation: number;
}

export class MeetingMedia {
  private remoteMedia: ReadonlyMap<number, RemoteMedia> = new Map();
  private localStream: MediaStream | null = null;
  private noDevice = '';
  private readonly changes = new ChangeListeners();
  private readonly roomCode: string;
  private readonly selfId: number;
  private readonly onError: (message: string) => void;
  private readonly makeDevice: () => MediaDevice;
  private device: MediaDevice;
  private send: Transport | null = null;
  private recv: Transport | null = null;
  private readonly producers = new Map<'audio' | 'video', Producer>();
  /** producer_id → consumer (null while being created). */
  private readonly consumers = new Map<string, Consumer | null>();
  private readonly owners = new Map<string, number>();
  private readonly sources = new Map<string, MediaSource>();
  private readonly resumed = new Set<string>();
  private generation = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly offs: (() => void)[] = [];
  /** Consumers that failed for a passing reason, made again later (see ./retry.ts). */
  private readonly consumeRetries = new RetryTimers();
  private closed = false;
  private enabled = { audio: true, video: true };
  /** The previous socket's producers, closed once the page is back (see `start`). */
  private leftBehind: string[] = [];
  private waiting: Waiting[] = [];
  /** The screen this page shares (its tracks), and their producers while produced. */
  private screenStream: MediaStream | null = null;
  private readonly screenProducers: Producer[] = [];
  /** Per member: how the page shows its video, and what the server was last told. */
  private readonly views = new Map<number, TileView>();
  private readonly told = new Map<string, string>();

  constructor(
    private readonly socket: MediaSocket,
    private readonly options: MeetingMediaOptions,
  ) {
    this.roomCode = options.roomCode;
    this.selfId = options.selfId;
    this.onError = options.onError;
    this.makeDevice = options.makeDevice ?? (() => new Device());
    this.device = this.makeDevice();
    this.offs.push(
      socket.on('meeting.member.producer.new', (f) => this.onProducer(f)),
      socket.on('meeting.media.reset', (f) => void this.onReset(f)),
    );
  }

  /** Other members' streams, by user id. */
  get remote(): ReadonlyMap<number, RemoteMedia> {
    return this.remoteMedia;
  }

  /** The camera and microphone (null before `load`, when none could be opened, after `close`). */
  get local(): MediaStream | null {
    return this.localStream;
  }

  /** Why there is no camera / microphone, when there is none. */
  get deviceError(): string {
    return this.noDevice;
  }

  /** Calls `listener` after every change of `remote`, `local` or `deviceError`. */
  onChange(listener: () => void): () => void {
    return this.changes.add(listener);
  }

  /** The router moved to another media server: everything is made again there. */
  private async onReset(frame: MediaFrame<'meeting.media.reset'>): Promise<void> {
    const d = frame.data;
    if (d.room_code !== this.roomCode || this.closed) return;
    this.prepare();
    try {
      if (d.rtp_capabilities) {
        this.options.onRouter?.({ router_id: d.router_id, rtp_capabilities: d.rtp_capabilities });
        const device = this.makeDevice();
        await device.load({ routerRtpCapabilities: d.rtp_capabilities });
        this.device = device;
      }
      await this.socket.request('meeting.room.join', { room_code: this.roomCode });
      await this.start();
    } catch (error) {
      this.onError(`媒体服务切换后重连失败: ${(error as Error).message}`);
    }
  }

  /** A transport's connection failed (its reset frame, if any, never came): join again. */
  private async onTransportFailed(): Promise<void> {
    if (this.closed) return;
    this.prepare();
    try {
      await this.socket.request('meeting.room.join', { room_code: this.roomCode });
      await this.start();
    } catch (error) {
      this.onError(`媒体连接失败后重连失败: ${(error as Error).message}`);
    }
  }

  /** Loads the device and opens the camera and microphone (before the first join). */
  async load(rtpCapabilities: unknown): Promise<void> {
    await this.device.load({ routerRtpCapabilities: rtpCapabilities as never });
    this.localStream = await this.openDevices();
    this.changes.emit();
  }

  /**
   * Before each `meeting.room.join` (the first and after a reconnect): drops what belonged
   * to the previous socket, so that the producers listed right after the join's ACK are
   * kept for `start`.
   */
  prepare(): void {
    this.generation++;
    for (const producer of this.producers.values()) this.leftBehind.push(producer.id);
    this.reset();
  }

  /** On the socket that just sent `meeting.room.join`: transports, produce. */
  async start(): Promise<void> {
    const generation = this.generation;
    // Closed by their node when the socket dropped, but still on the media server when that
    // node died: closed here (its owner's call), so the others drop them and nobody is offered them.
    for (const id of this.leftBehind.splice(0)) {
      await this.socket
        .request('meeting.producer.close', { room_code: this.roomCode, producer_id: id })
        .catch(() => undefined);
    }
    const create = (direction: 'send' | 'recv') =>
      this.socket.request<TransportInfo>('meeting.transport.create', {
        room_code: this.roomCode,
        direction,
      });
    const send = this.wire(this.device.createSendTransport(await create('send')));
    const recv = this.wire(this.device.createRecvTransport(await create('recv')));
    if (generation !== this.generation || this.closed) {
      send.close();
      recv.close();
      return;
    }
    this.send = send;
    this.recv = recv;
    // Producers announced before the recv transport existed wait in the queue.
    this.pump();
    for (const track of this.localStream?.getTracks() ?? []) {
      const kind = track.kind as 'audio' | 'video';
      const producer = await send.produce({
        track,
        stopTracks: false,
        ...(kind === 'video' ? { encodings: CAMERA_SIMULCAST } : { codecOptions: MICROPHONE_OPUS }),
      });
      if (generation !== this.generation) return;
      this.producers.set(kind, producer);
      if (!this.enabled[kind]) producer.pause();
    }
    // Sharing a screen when the socket dropped: shared again on the new one.
    if (this.screenStream) await this.produceScreen(send, generation);
  }

  /** The screen this page shares, or null. */
  get sharedScreen(): MediaStream | null {
    return this.screenStream;
  }

  /**
   * Shares `stream` (from getDisplayMedia): its video as `source: "screen"`, its audio as
   * `screen_audio`. Refused (其他成员正在共享屏幕) while another member shares, unless
   * this member hosts. Ends by itself when the browser's own "stop sharing" ends the track.
   */
  async shareScreen(stream: MediaStream): Promise<void> {
    if (this.screenStream) await this.stopScreen();
    this.screenStream = stream;
    for (const track of stream.getTracks()) {
      track.addEventListener('ended', () => void this.stopScreen());
    }
    if (!this.send) return; // produced by `start` once the transports exist
    try {
      await this.produceScreen(this.send, this.generation);
    } catch (error) {
      this.dropScreen();
      throw error;
    }
    this.changes.emit();
  }

  /** Stops sharing: the producers close (the share is free for others) and the tracks end. */
  async stopScreen(): Promise<void> {
    const producers = this.screenProducers.splice(0);
    this.dropScreen();
    for (const producer of producers) {
      await this.socket
        .request('meeting.producer.close', { room_code: this.roomCode, producer_id: producer.id })
        .catch(() => undefined); // gone with the socket: its close released it
    }
    this.changes.emit();
  }

  /**
   * The share was taken over (the server closed this page's screen producers): let go of
   * them and of the tracks, without telling the server again.
   */
  screenTakenOver(): void {
    this.screenProducers.splice(0);
    this.dropScreen();
    this.changes.emit();
  }

  private dropScreen(): void {
    for (const producer of this.screenProducers.splice(0)) producer.close();
    for (const track of this.screenStream?.getTracks() ?? []) track.stop();
    this.screenStream = null;
  }

  private async produceScreen(send: Transport, generation: number): Promise<void> {
    for (const track of this.screenStream?.getTracks() ?? []) {
      const source = track.kind === 'video' ? 'screen' : 'screen_audio';
      const producer = await send.produce({
        track,
        stopTracks: false,
        appData: { source },
        ...(track.kind === 'video' ? { encodings: [{ maxBitrate: 1_500_000 }] } : {}),
      });
      if (generation !== this.generation) return;
      this.screenProducers.push(producer);
    }
  }

  /**
   * How the page shows `userId`'s video now: its consumer forwards the layer that width
   * needs, or nothing while hidden (`meeting.consumer.preferences`). Kept, and told again
   * for the member's next video consumer. Repeats are not sent.
   */
  showVideo(userId: number, view: TileView): void {
    this.views.set(userId, view);
    void this.tellView(userId);
  }

  /** Tells the server how `userId`'s video is shown, unless it knows; false if it failed. */
  private async tellView(userId: number): Promise<boolean> {
    const view = this.views.get(userId);
    const consumerId = this.remoteMedia.get(userId)?.videoConsumerId;
    // Told once the page attached the track (a wish to forward is a resume).
    if (!view || !consumerId || !this.resumed.has(consumerId)) return true;
    const wish = { max_width: Math.max(1, Math.round(view.maxWidth)), paused: !view.visible };
    const key = JSON.stringify(wish);
    if (this.told.get(consumerId) === key) return true;
    this.told.set(consumerId, key);
    try {
      await this.socket.request('meeting.consumer.preferences', {
        consumer_id: consumerId,
        ...wish,
      });
      return true;
    } catch (error) {
      this.told.delete(consumerId);
      this.onError(`无法调整成员 ${userId} 的视频: ${(error as Error).message}`);
      return false;
    }
  }

  setEnabled(kind: 'audio' | 'video', enabled: boolean): void {
    this.enabled[kind] = enabled;
    const producer = this.producers.get(kind);
    if (producer) {
      if (enabled) producer.resume();
      else producer.pause();
    } else {
      for (const track of this.localStream?.getTracks() ?? []) {
        if (track.kind === kind) track.enabled = enabled;
      }
    }
  }

  /** The page attached the consumer's track to its element: the server may now forward. */
  async attached(consumerId: string): Promise<void> {
    if (this.resumed.has(consumerId)) return;
    this.resumed.add(consumerId);
    const owner = [...this.remoteMedia].find(([, m]) => m.videoConsumerId === consumerId)?.[0];
    if (owner !== undefined && this.views.has(owner)) {
      // A video whose tile is known: its layer and its pause in one request, which resumes
      // it on that layer. Resumed first, it would start on the top layer and switch down at
      // once; a switch waits for a key frame of the new layer, and a loaded sender that
      // drops its top layer meanwhile can leave the picture frozen.
      if (!(await this.tellView(owner))) this.resumed.delete(consumerId);
      return;
    }
    try {
      await this.socket.request('meeting.consume.resume', { consumer_id: consumerId });
    } catch (error) {
      this.resumed.delete(consumerId);
      this.onError((error as Error).message);
      return;
    }
    if (owner !== undefined) await this.tellView(owner);
  }

  /** What arrived from each member (inbound-rtp of the recv transport), for a debug hook. */
  async received(): Promise<
    {
      userId: number;
      kind: string;
      source: MediaSource;
      bytes: number;
      frames: number;
      frameWidth: number;
    }[]
  > {
    if (!this.recv) return [];
    const report = await this.recv.getStats();
    const bySsrc = new Map<number, RTCInboundRtpStreamStats>();
    report.forEach((s: RTCStats) => {
      if (s.type === 'inbound-rtp') bySsrc.set((s as RTCInboundRtpStreamStats).ssrc, s as never);
    });
    const out = [];
    for (const [producerId, consumer] of this.consumers) {
      if (!consumer) continue;
      const s = bySsrc.get(consumer.rtpParameters.encodings?.[0]?.ssrc ?? -1);
      out.push({
        userId: this.owners.get(producerId) ?? 0,
        kind: consumer.kind,
        source:
          this.sources.get(producerId) ?? (consumer.kind === 'audio' ? 'microphone' : 'camera'),
        bytes: s?.bytesReceived ?? 0,
        frames: s?.framesDecoded ?? 0,
        // The width of the last decoded frame: which simulcast layer arrives.
        frameWidth: s?.frameWidth ?? 0,
      });
    }
    return out;
  }

  /**
   * What the page sends of video, a row per encoding (the camera's two simulcast layers, a
   * shared screen's one): its width now, and why the browser holds it back (`cpu`,
   * `bandwidth` or `none`). A layer the browser stopped sending keeps its last width.
   */
  async sent(): Promise<{ rid: string; frameWidth: number; bytes: number; limitation: string }[]> {
    if (!this.send) return [];
    const report = await this.send.getStats();
    const out: { rid: string; frameWidth: number; bytes: number; limitation: string }[] = [];
    report.forEach((s: RTCStats) => {
      if (s.type !== 'outbound-rtp' || (s as RTCOutboundRtpStreamStats).kind !== 'video') return;
      const o = s as RTCOutboundRtpStreamStats & { qualityLimitationReason?: string };
      out.push({
        rid: o.rid ?? '',
        frameWidth: o.frameWidth ?? 0,
        bytes: o.bytesSent ?? 0,
        limitation: o.qualityLimitationReason ?? 'none',
      });
    });
    return out;
  }

  /** Audio level (0-1) per member, self included (from what its microphone sends). */
  async levels(): Promise<Map<number, number>> {
    const levels = new Map<number, number>();
    const collect = async (
      transport: Transport | null,
      type: string,
      who: (s: RTCStats) => number | undefined,
    ) => {
      if (!transport) return;
      const report = await transport.getStats();
      report.forEach((s: RTCStats & { audioLevel?: number; kind?: string }) => {
        if (s.type !== type || s.audioLevel === undefined) return;
        const user = who(s);
        if (user !== undefined) levels.set(user, Math.max(levels.get(user) ?? 0, s.audioLevel));
      });
    };
    const owners = new Map<number, number>();
    for (const [producerId, consumer] of this.consumers) {
      const ssrc = consumer?.rtpParameters.encodings?.[0]?.ssrc;
      if (consumer?.kind === 'audio' && ssrc !== undefined) {
        owners.set(ssrc, this.owners.get(producerId) ?? 0);
      }
    }
    await collect(this.recv, 'inbound-rtp', (s) =>
      owners.get((s as RTCInboundRtpStreamStats).ssrc),
    );
    await collect(this.send, 'media-source', (s) =>
      (s as { kind?: string }).kind === 'audio' && this.enabled.audio ? this.selfId : undefined,
    );
    return levels;
  }

  close(): void {
    this.closed = true;
    this.generation++;
    this.reset();
    for (const off of this.offs) off();
    for (const track of this.localStream?.getTracks() ?? []) track.stop();
    this.localStream = null;
    this.changes.emit();
  }

  private async openDevices(): Promise<MediaStream | null> {
    const attempts: MediaStreamConstraints[] = [
      { audio: true, video: { width: 640, height: 360 } },
      { audio: true },
      { video: true },
    ];
    let last = '';
    for (const constraints of attempts) {
      try {
        const stream = await navigator.mediaDevices.getUserMedia(constraints);
        if (!constraints.video) this.noDevice = '无法使用摄像头: 仅音频';
        if (!constraints.audio) this.noDevice = '无法使用麦克风: 仅视频';
        return stream;
      } catch (error) {
        last = (error as Error).message;
      }
    }
    this.noDevice = `无法使用摄像头和麦克风 (${last})：你仍可收看收听`;
    return null;
  }

  private reset(): void {
    for (const producer of this.producers.values()) producer.close();
    this.producers.clear();
    // The tracks stay: `start` shares them again on the new transports.
    for (const producer of this.screenProducers.splice(0)) producer.close();
    for (const consumer of this.consumers.values()) consumer?.close();
    this.consumers.clear();
    this.owners.clear();
    this.sources.clear();
    this.resumed.clear();
    this.send?.close();
    this.recv?.close();
    this.send = null;
    this.recv = null;
    this.waiting = [];
    this.consumeRetries.clear();
    if (this.remoteMedia.size > 0) this.setRemote((remote) => remote.clear());
  }

  /** Changes a copy of `remote` (the one handed out stays as it was) and tells the listeners. */
  private setRemote(change: (remote: Map<number, RemoteMedia>) => void): void {
    const next = new Map(this.remoteMedia);
    change(next);
    this.remoteMedia = next;
    this.changes.emit();
  }

  private onProducer(frame: MediaFrame<'meeting.member.producer.new'>): void {
    const d = frame.data;
    if (d.room_code !== this.roomCode || d.user_id === this.selfId) return;
    if (d.closed) {
      const consumer = this.consumers.get(d.producer_id);
      consumer?.close();
      this.consumers.delete(d.producer_id);
      const media = this.remoteMedia.get(d.user_id);
      if (!media || !consumer) return;
      // Only if it is still the one shown (a newer producer of the member may have replaced it).
      const gone: Record<string, null> = {};
      for (const [stream, id] of Object.values(SLOTS)) {
        if (media[id] === consumer.id) Object.assign(gone, { [stream]: null, [id]: null });
      }
      if (Object.keys(gone).length > 0) {
        this.setRemote((remote) => remote.set(d.user_id, { ...media, ...gone }));
      }
      return;
    }
    // A producer may be announced twice (listed after the join ACK, and broadcast).
    if (this.consumers.has(d.producer_id)) return;
    this.consumers.set(d.producer_id, null);
    this.owners.set(d.producer_id, d.user_id);
    // A server before sources were told: the kind's default.
    const source = d.source ?? (d.kind === 'audio' ? 'microphone' : 'camera');
    this.sources.set(d.producer_id, source);
    this.waiting.push({
      producerId: d.producer_id,
      userId: d.user_id,
      source,
      generation: this.generation,
    });
    this.pump();
  }

  /** Consumes the waiting producers one at a time, once the recv transport exists. */
  private pump(): void {
    if (!this.recv) return;
    for (const item of this.waiting.splice(0)) this.enqueue(item, 0);
  }

  /** Consumes `item` after what is queued; a failure that may pass is tried again later. */
  private enqueue(item: Waiting, failures: number) {
    // Still announced and not consumed, on the same socket's transports.
    const wanted = () =>
      item.generation === this.generation && this.consumers.get(item.producerId) === null;
    this.queue = this.queue
      .then(() => this.consume(item))
      .catch((error: Error) => {
        if (wanted() && mayPass(error) && failures + 1 < CONSUME_ATTEMPTS) {
          this.consumeRetries.later(backoff(RETRY_MS, failures), () => {
            if (wanted()) this.enqueue(item, failures + 1);
          });
          return;
        }
        this.onError(`无法接收成员 ${item.userId} 的媒体: ${error.message}`);
      });
  }

  private async consume(item: Waiting): Promise<void> {
    const { producerId, userId, generation } = item;
    const recv = this.recv;
    if (!recv || generation !== this.generation || !this.consumers.has(producerId)) return;
    const info = await this.socket.request<ConsumerInfo>('meeting.consume.start', {
      room_code: this.roomCode,
      transport_id: recv.id,
      producer_id: producerId,
      rtp_capabilities: this.device.rtpCapabilities,
    });
    const consumer = await recv.consume(info);
    if (generation !== this.generation || !this.consumers.has(producerId)) {
      consumer.close();
      return;
    }
    this.consumers.set(producerId, consumer);
    const media = this.remoteMedia.get(userId) ?? {
      audio: null,
      video: null,
      audioConsumerId: null,
      videoConsumerId: null,
    };
    const [stream, id] = SLOTS[item.source];
    const shown = { ...media, [stream]: new MediaStream([consumer.track]), [id]: consumer.id };
    this.setRemote((remote) => remote.set(userId, shown));
    // A shared screen is forwarded at once: one large view, no tile to mount it in first.
    if (item.source === 'screen' || item.source === 'screen_audio')
      await this.attached(consumer.id);
  }

  private wire(transport: Transport): Transport {
    return signalled(this.socket, 'meeting', { room_code: this.roomCode }, transport, () => {
      if (transport === this.recv || transport === this.send) {
        void this.onTransportFailed();
      }
    });
  }
}
