/**
 * A voice room's audio with mediasoup-client over the node's `voice.*` signalling:
 * `voice.media.join {room_id}` → `{router_id, rtp_capabilities, producers}`, a recv transport
 * for everyone (the audience hears the seats), a send transport and one audio producer for
 * the current seat holder (`voice.produce.start`), consumers created paused and resumed once
 * attached (`voice.consume.resume`), `voice.producer.new` for producers that come and go, and
 * `voice.speakers` for who is talking.
 *
 * The room works without it: when `voice.media.join` is not answered (a node without voice
 * media, an older node that drops unknown events unanswered, or a node too busy to answer in
 * time) or refused, `status` says `unavailable` with the reason and the room (seats, gifts,
 * members) goes on as before. A failure that may pass (no answer, a media server down: see
 * ./retry.ts's `mayPass`) is tried again with backoff until `close`, and so is a consumer
 * that could not be made for such a reason; once the media is joined, a seat holder whose
 * microphone is open sends.
 *
 * `voice.media.reset {room_id, …}` (the room's media server died; its router is on another
 * one now) is handled without a page reload: the media is joined again from scratch and a
 * seat holder who was sending sends again, with the same microphone.
 */
import { Device } from 'mediasoup-client';
import type { Consumer, Producer, Transport } from 'mediasoup-client/types';
import { ChangeListeners } from './changes.js';
import type { MediaDevice, MediaFrame, MediaSocket } from './ports.js';
import { backoff, CONSUME_ATTEMPTS, mayPass, RETRY_MS, RetryTimers } from './retry.js';
import { MICROPHONE_OPUS, signalled } from './transports.js';

export type VoiceMediaStatus = 'idle' | 'checking' | 'ready' | 'unavailable';

/** A seat holder's audio, as the page plays it. */
export interface VoiceRemote {
  readonly stream: MediaStream;
  readonly consumerId: string;
}

export interface VoiceMediaOptions {
  readonly roomId: string;
  /** The caller's user id: its own producer is not consumed. */
  readonly selfId: number;
  /** A failure to show (a consumer given up, a refused resume or close). */
  readonly onError: (message: string) => void;
  /** Makes the device (a scripted one in tests). */
  readonly makeDevice?: () => MediaDevice;
}

interface JoinAnswer {
  router_id: string;
  rtp_capabilities: unknown;
  producers: { user_id: number; producer_id: string; kind: string }[];
}

/**
 * How long the first `voice.media.join` may stay unanswered before audio counts as
 * unavailable (each retry waits twice as long, up to the socket's usual 10 s: a busy node
 * answers a retry that it could not answer in time).
 */
const JOIN_TIMEOUT_MS = { first: 4_000, max: 10_000 };

export class VoiceMedia {
  private state: VoiceMediaStatus = 'idle';
  private why = '';
  private remoteAudio: ReadonlyMap<number, VoiceRemote> = new Map();
  private volumes: ReadonlyMap<number, number> = new Map();
  private localStream: MediaStream | null = null;
  private readonly changes = new ChangeListeners();
  private readonly roomId: string;
  private readonly selfId: number;
  private readonly onError: (message: string) => void;
  private readonly makeDevice: () => MediaDevice;
  private device: MediaDevice | null = null;
  private recv: Transport | null = null;
  private send: Transport | null = null;
  private producer: Producer | null = null;
  private readonly consumers = new Map<string, Consumer | null>();
  private readonly resumed = new Set<string>();
  private readonly offs: (() => void)[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  /** Transient join failures in a row, and the next try's timer. */
  private joinFailures = 0;
  private readonly joinRetry = new RetryTimers();
  /** The join in flight (`checking`): a publish asked meanwhile waits for it. */
  private joining: Promise<void> = Promise.resolve();
  private readonly consumeRetries = new RetryTimers();
  private closed = false;

  constructor(
    private readonly socket: MediaSocket,
    options: VoiceMediaOptions,
  ) {
    this.roomId = options.roomId;
    this.selfId = options.selfId;
    this.onError = options.onError;
    this.makeDevice = options.makeDevice ?? (() => new Device());
    this.offs.push(
      socket.on('voice.producer.new', (f) => this.onProducer(f)),
      socket.on('voice.speakers', (f) => this.onSpeakers(f)),
      socket.on('voice.media.reset', (f) => void this.onReset(f)),
    );
  }

  get status(): VoiceMediaStatus {
    return this.state;
  }

  /** Why audio is unavailable (the refusal or the missing answer). */
  get reason(): string {
    return this.why;
  }

  /** The seat holders' audio, by user id. */
  get remote(): ReadonlyMap<number, VoiceRemote> {
    return this.remoteAudio;
  }

  /** Producers announced and not consumed yet (being consumed, or waiting for a retry). */
  get consuming(): number {
    return [...this.consumers.values()].filter((c) => c === null).length;
  }

  /** Volume by user id from `voice.speakers` (absent: silent). */
  get speakers(): ReadonlyMap<number, number> {
    return this.volumes;
  }

  /** The microphone, while publishing (opened by `publish`, stopped by `unpublish`). */
  get local(): MediaStream | null {
    return this.localStream;
  }

  get available(): boolean {
    return this.state === 'ready';
  }

  /** Calls `listener` after every change of `status`, `reason`, `remote`, `speakers`, `local`. */
  onChange(listener: () => void): () => void {
    return this.changes.add(listener);
  }

  /** The router moved to another media server: join its media again, send again if sending. */
  private async onReset(frame: MediaFrame<'voice.media.reset'>): Promise<void> {
    if (frame.data.room_id !== this.roomId) return;
    await this.rejoin();
  }

  /** Joins the media again and, if sending, sends again (a reset, or a failed transport). */
  private async rejoin(): Promise<void> {
    const sending = this.producer !== null;
    await this.join();
    if (sending && this.localStream) {
      await this.publish().catch((error: Error) => this.onError(error.message));
    }
  }

  /** Joins the room's media (after every room.subscribe: a new socket has none). */
  join(): Promise<void> {
    this.joining = this.joinNow();
    return this.joining;
  }

  private async joinNow(): Promise<void> {
    if (this.closed) return;
    this.joinRetry.clear();
    const leftBehind = this.producer?.id;
    this.reset();
    this.setStatus('checking');
    let answer: JoinAnswer;
    try {
      answer = await this.socket.request<JoinAnswer>(
        'voice.media.join',
        { room_id: this.roomId },
        { timeoutMs: backoff(JOIN_TIMEOUT_MS, this.joinFailures) },
      );
    } catch (error) {
      this.unavailable(error);
      return;
    }
    // Still on the media server if the previous socket's node died: closed as its owner.
    if (leftBehind) {
      await this.socket
        .request('voice.producer.close', { room_id: this.roomId, producer_id: leftBehind })
        .catch(() => undefined);
    }
    try {
      this.device = this.makeDevice();
      await this.device.load({ routerRtpCapabilities: answer.rtp_capabilities as never });
      this.recv = this.wire(this.device.createRecvTransport(await this.createTransport('recv')));
      this.setStatus('ready');
      this.joinFailures = 0;
      for (const p of answer.producers ?? []) this.announce(p.user_id, p.producer_id);
    } catch (error) {
      this.unavailable(error);
    }
  }

  /**
   * Opens the microphone and, with media, sends it (the caller holds a seat). Resolves true
   * when audio really leaves the page (then the seat may be confirmed as publishing).
   */
  async publish(): Promise<boolean> {
    if (!this.localStream) {
      this.localStream = await navigator.mediaDevices.getUserMedia({ audio: true });
      this.changes.emit();
    }
    // A seat taken while the media is being joined: answered false then, the page would
    // confirm the seat itself and its holder never send.
    if (this.state === 'checking') await this.joining;
    if (!this.available || !this.device || this.producer) return false;
    this.send ??= this.wire(this.device.createSendTransport(await this.createTransport('send')));
    const track = this.localStream.getAudioTracks()[0];
    if (!track) return false;
    this.producer = await this.send.produce({
      track,
      stopTracks: false,
      codecOptions: MICROPHONE_OPUS,
    });
    return true;
  }

  /** Stops sending (off the mic). */
  async unpublish(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    this.stopMicrophone();
    if (!producer) return;
    producer.close();
    await this.socket
      .request('voice.producer.close', { room_id: this.roomId, producer_id: producer.id })
      .catch((error: Error) => this.onError(error.message));
  }

  setMuted(muted: boolean): void {
    if (this.producer) {
      if (muted) this.producer.pause();
      else this.producer.resume();
    }
    for (const track of this.localStream?.getAudioTracks() ?? []) track.enabled = !muted;
  }

  /** The page attached the consumer's track to its element: the server may now forward. */
  async attached(consumerId: string): Promise<void> {
    if (this.resumed.has(consumerId)) return;
    this.resumed.add(consumerId);
    await this.socket
      .request('voice.consume.resume', { consumer_id: consumerId })
      .catch((error: Error) => this.onError(error.message));
  }

  /** Inbound audio bytes per user (for a debug hook). */
  async received(): Promise<{ userId: number; bytes: number }[]> {
    if (!this.recv) return [];
    const report = await this.recv.getStats();
    const bytes = new Map<number, number>();
    report.forEach((s: RTCStats) => {
      const i = s as RTCInboundRtpStreamStats;
      if (s.type === 'inbound-rtp') bytes.set(i.ssrc, i.bytesReceived ?? 0);
    });
    const out = [];
    for (const [userId, r] of this.remoteAudio) {
      const consumer = [...this.consumers.values()].find((c) => c?.id === r.consumerId);
      const ssrc = consumer?.rtpParameters.encodings?.[0]?.ssrc ?? -1;
      out.push({ userId, bytes: bytes.get(ssrc) ?? 0 });
    }
    return out;
  }

  close(): void {
    this.closed = true;
    this.joinRetry.clear();
    for (const off of this.offs) off();
    this.reset();
    this.stopMicrophone();
  }

  /** Audio is unavailable for `error`; tried again later if that may pass. */
  private unavailable(error: unknown): void {
    this.why = (error as Error).message;
    this.setStatus('unavailable');
    if (this.closed || !mayPass(error)) return;
    this.joinRetry.later(backoff(RETRY_MS, this.joinFailures++), () => {
      void this.join()
        // The seat holder went live without media (the page confirmed): sends now.
        .then(() => (this.available && this.localStream ? this.publish() : false))
        .catch((e: Error) => this.onError(e.message));
    });
  }

  private setStatus(status: VoiceMediaStatus): void {
    this.state = status;
    this.changes.emit();
  }

  private stopMicrophone(): void {
    for (const track of this.localStream?.getTracks() ?? []) track.stop();
    if (!this.localStream) return;
    this.localStream = null;
    this.changes.emit();
  }

  private reset(): void {
    this.producer?.close();
    this.producer = null;
    for (const c of this.consumers.values()) c?.close();
    this.consumers.clear();
    this.consumeRetries.clear();
    this.resumed.clear();
    this.send?.close();
    this.recv?.close();
    this.send = null;
    this.recv = null;
    if (this.remoteAudio.size > 0 || this.volumes.size > 0) {
      this.remoteAudio = new Map();
      this.volumes = new Map();
      this.changes.emit();
    }
  }

  private createTransport(direction: 'send' | 'recv') {
    return this.socket.request<never>('voice.transport.create', {
      room_id: this.roomId,
      direction,
    });
  }

  private onSpeakers(frame: MediaFrame<'voice.speakers'>): void {
    const d = frame.data;
    if (d.room_id !== this.roomId) return;
    this.volumes = new Map(d.speakers.map((s) => [s.user_id, s.volume]));
    this.changes.emit();
  }

  private onProducer(frame: MediaFrame<'voice.producer.new'>): void {
    const d = frame.data;
    if (d.room_id !== this.roomId) return;
    if (d.closed) {
      this.consumers.get(d.producer_id)?.close();
      this.consumers.delete(d.producer_id);
      this.setRemote((remote) => remote.delete(d.user_id));
      return;
    }
    this.announce(d.user_id, d.producer_id);
  }

  /** Changes a copy of `remote` (the one handed out stays as it was) and tells the listeners. */
  private setRemote(change: (remote: Map<number, VoiceRemote>) => void): void {
    const next = new Map(this.remoteAudio);
    change(next);
    this.remoteAudio = next;
    this.changes.emit();
  }

  private announce(userId: number, producerId: string, failures = 0): void {
    if (userId === this.selfId || !this.recv) return;
    if (failures === 0 && this.consumers.has(producerId)) return;
    this.consumers.set(producerId, null);
    const recv = this.recv;
    // Still announced and not consumed, on the same recv transport.
    const wanted = () => this.recv === recv && this.consumers.get(producerId) === null;
    this.queue = this.queue
      .then(() => this.consume(userId, producerId))
      .catch((error: Error) => {
        if (wanted() && mayPass(error) && failures + 1 < CONSUME_ATTEMPTS) {
          this.consumeRetries.later(backoff(RETRY_MS, failures), () => {
            if (wanted()) this.announce(userId, producerId, failures + 1);
          });
          return;
        }
        this.onError(`无法接收 ${userId} 的声音: ${error.message}`);
      });
  }

  private async consume(userId: number, producerId: string): Promise<void> {
    const recv = this.recv;
    if (!recv || !this.device || !this.consumers.has(producerId)) return;
    const info = await this.socket.request<{
      id: string;
      producerId: string;
      kind: 'audio';
      rtpParameters: never;
    }>('voice.consume.start', {
      room_id: this.roomId,
      transport_id: recv.id,
      producer_id: producerId,
      rtp_capabilities: this.device.rtpCapabilities,
    });
    const consumer = await recv.consume(info);
    if (!this.consumers.has(producerId)) return consumer.close();
    this.consumers.set(producerId, consumer);
    const audio = { stream: new MediaStream([consumer.track]), consumerId: consumer.id };
    this.setRemote((remote) => remote.set(userId, audio));
  }

  private wire(transport: Transport): Transport {
    // A transport of this join that fails (not one a later join replaced) makes it all again.
    return signalled(this.socket, 'voice', { room_id: this.roomId }, transport, () => {
      if (!this.closed && (transport === this.recv || transport === this.send)) {
        void this.rejoin();
      }
    });
  }
}
