/**
 * One WebSocket to a node (`/ws?token=`): requests matched to their `<event>.ack` by `seq`,
 * S→C frames dispatched by event name, and a reconnect with backoff after any drop (a node
 * restart, a dead peer, 1001 on drain, 4029 over the frame budget). After each (re)open the
 * `onOpen` handlers run again: a new socket follows nothing, so that is where rooms are
 * followed again (./room-feed.ts does it with replay). A 4001 close (bad or expired token)
 * does not reconnect.
 *
 * Works with the browser's WebSocket and with Node's (`ws`, or the global one of Node 22):
 * pass the constructor as `WebSocket` where there is no global one.
 */

import type {
  AckOf,
  ClientEventName,
  FrameDataOf,
  PayloadOf,
  ServerEventName,
} from './protocol.js';

/** A frame of the server: an ACK (`<event>.ack`, with `seq`) or a pushed event. */
export interface Frame<D = Record<string, unknown>> {
  readonly event: string;
  readonly seq?: number;
  /** 0: success; -1: a refused request (its ACK). */
  readonly code: number;
  readonly data: D;
  readonly message?: string;
  readonly reason?: string;
  readonly time?: string;
}

export type SocketStatus = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';

/** Reasons of failures the socket makes itself (the server's are docs/errors.md's). */
export type SocketReason = 'TIMEOUT' | 'DISCONNECTED' | 'NOT_CONNECTED';

/** A refused request (the ACK's message and reason code), or one that got no ACK. */
export class RealtimeError extends Error {
  override readonly name = 'RealtimeError';
  constructor(
    message: string,
    readonly reason: string | undefined,
  ) {
    super(message);
  }
}

/** What the client uses of a WebSocket (the browser's, or `ws`'s compatible API). */
export interface SocketLike {
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason?: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}
export type SocketConstructor = new (url: string) => SocketLike;

export interface RealtimeOptions {
  /** The socket's URL, computed at each (re)connect: the token may have changed. */
  readonly url: () => string;
  /** Where there is no global WebSocket (Node 20): `ws`'s default export. */
  readonly WebSocket?: SocketConstructor;
  /** Called once when the server refuses the token (close 4001): log in again. */
  readonly onUnauthorized?: () => void;
  /** How long a request waits for its ACK (default 10 s). */
  readonly timeoutMs?: number;
  /** The longest wait between two reconnects (default 5 s; the wait doubles from 250 ms). */
  readonly maxBackoffMs?: number;
  /**
   * The frames this client sends per second on average and at once. The node closes a
   * socket past its budget (4029; `ROOMS_WS_MAX_FRAMES_PER_S` 50, `ROOMS_WS_FRAME_BURST` 100
   * by default): requests past this one wait their turn instead. Default 40 and 80.
   */
  readonly frames?: { readonly ratePerSecond: number; readonly burst: number };
}

interface Pending {
  readonly event: string;
  readonly resolve: (data: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

const OPEN = 1;
/** Close codes after which no reconnect helps (docs/protocol.md). */
const UNAUTHORIZED = 4001;

/** The `ws://` URL of a node's socket for a token (`https://x` → `wss://x/ws?token=`). */
export function socketUrl(baseUrl: string, token: string): string {
  const url = new URL('/ws', baseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('token', token);
  return url.toString();
}

/** A socket's `connection_id`: 16 random bytes, base64url (`getRandomValues`: any page). */
function newConnectionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/**
 * The socket's URL with its `connection_id` and, on a reconnect, `replaces` (the previous
 * socket's id): the node cuts that one at once, wherever it is, and releases what it held
 * (its media), instead of waiting for it to miss a ping on a path that is gone.
 */
function withConnection(url: string, id: string, replaces: string | null): string {
  const params = new URLSearchParams({ connection_id: id });
  if (replaces !== null) params.set('replaces', replaces);
  return `${url}${url.includes('?') ? '&' : '?'}${params.toString()}`;
}

export class RealtimeClient {
  /** How many times the socket opened (1 + reconnects). */
  opens = 0;
  /** The `connection_id` of the last socket that opened (a reconnect replaces it). */
  private lastOpened: string | null = null;
  private current: SocketStatus = 'idle';
  private socket: SocketLike | null = null;
  private active = false;
  private seq = 0;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly pending = new Map<number, Pending>();
  private readonly handlers = new Map<string, Set<(frame: Frame) => void>>();
  private readonly anyHandlers = new Set<(frame: Frame) => void>();
  private readonly openHandlers = new Set<() => void>();
  private readonly closeHandlers = new Set<(code: number) => void>();
  private readonly statusHandlers = new Set<(status: SocketStatus, detail: string) => void>();
  private readonly waitingOpen = new Set<() => void>();
  private readonly rate: number;
  private readonly burst: number;
  private tokens: number;
  private refilledAt = Date.now();

  constructor(private readonly options: RealtimeOptions) {
    this.rate = options.frames?.ratePerSecond ?? 40;
    this.burst = options.frames?.burst ?? 80;
    this.tokens = this.burst;
  }

  get status(): SocketStatus {
    return this.current;
  }

  get isOpen(): boolean {
    return this.socket?.readyState === OPEN;
  }

  /** Opens the socket, and keeps it open (reconnecting) until {@link close}. */
  connect(): void {
    this.active = true;
    if (!this.socket && !this.retryTimer) this.open();
  }

  /** Closes for good (log out): pending requests fail, no reconnect. */
  close(): void {
    this.active = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000, 'bye');
    this.lastOpened = null; // closed cleanly: nothing of it to replace
    this.failPending('the connection was closed');
    this.setStatus('closed', '');
  }

  /**
   * Drops the socket as a network failure would, and reconnects at once: after a network
   * change (the page's `online` event, a test). The old socket is not waited for: on a path
   * that is gone its closing handshake would never finish.
   */
  drop(): void {
    const socket = this.socket;
    if (!socket) return;
    socket.close(4000, 'dropped by the client');
    socket.onclose?.({ code: 4000, reason: 'dropped by the client' });
  }

  /**
   * Sends a C→S event; resolves with its ACK's data, rejects with a {@link RealtimeError}
   * (its `reason`: one of {@link RefusalOf} the event). A known event is typed from the
   * AsyncAPI document; another name (a newer node's event) takes and gives what it is told.
   */
  request<E extends ClientEventName>(
    event: E,
    data: PayloadOf<E>,
    options?: { timeoutMs?: number },
  ): Promise<AckOf<E>>;
  request<T = Record<string, unknown>, N extends string = string>(
    event: Exclude<N, ClientEventName>,
    data?: Record<string, unknown>,
    options?: { timeoutMs?: number },
  ): Promise<T>;
  async request<T>(
    event: string,
    data: object = {},
    options: { timeoutMs?: number } = {},
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? 10_000;
    await this.takeToken();
    if (!this.isOpen) await this.whenOpen(timeoutMs);
    const seq = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(seq);
        reject(new RealtimeError(`${event}: no answer in ${timeoutMs} ms`, 'TIMEOUT'));
      }, timeoutMs);
      this.pending.set(seq, { event, resolve: resolve as (d: unknown) => void, reject, timer });
      this.socket!.send(JSON.stringify({ event, seq, data }));
    });
  }

  /**
   * Listens to a pushed event by name (a known one's `data` typed from the AsyncAPI
   * document); returns the function that stops listening.
   */
  on<E extends ServerEventName>(
    event: E,
    handler: (frame: Frame<FrameDataOf<E>>) => void,
  ): () => void;
  on<D = Record<string, unknown>, N extends string = string>(
    event: Exclude<N, ServerEventName>,
    handler: (frame: Frame<D>) => void,
  ): () => void;
  on<D>(event: string, handler: (frame: Frame<D>) => void): () => void {
    let set = this.handlers.get(event);
    if (!set) this.handlers.set(event, (set = new Set()));
    const listener = handler as (frame: Frame) => void;
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Listens to every pushed event (not ACKs). */
  onAny(handler: (frame: Frame) => void): () => void {
    this.anyHandlers.add(handler);
    return () => this.anyHandlers.delete(handler);
  }

  /** Runs `handler` now if open, and after every reconnect; returns its remover. */
  onOpen(handler: () => void): () => void {
    this.openHandlers.add(handler);
    if (this.isOpen) handler();
    return () => this.openHandlers.delete(handler);
  }

  /** Runs `handler` with the close code after every drop (not after {@link close}). */
  onClose(handler: (code: number) => void): () => void {
    this.closeHandlers.add(handler);
    return () => this.closeHandlers.delete(handler);
  }

  /** Runs `handler` at every change of {@link status}, with why it is not open. */
  onStatus(handler: (status: SocketStatus, detail: string) => void): () => void {
    this.statusHandlers.add(handler);
    return () => this.statusHandlers.delete(handler);
  }

  private setStatus(status: SocketStatus, detail: string): void {
    this.current = status;
    for (const handler of [...this.statusHandlers]) handler(status, detail);
  }

  /** Waits until one more frame stays within the budget, then spends it. */
  private async takeToken(): Promise<void> {
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(
        this.burst,
        this.tokens + ((now - this.refilledAt) / 1000) * this.rate,
      );
      this.refilledAt = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, ((1 - this.tokens) / this.rate) * 1000));
    }
  }

  private whenOpen(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.waitingOpen.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waitingOpen.delete(done);
        reject(new RealtimeError('the connection is not open', 'NOT_CONNECTED'));
      }, timeoutMs);
      this.waitingOpen.add(done);
    });
  }

  private open(): void {
    if (!this.active) return;
    this.setStatus(this.attempt === 0 ? 'connecting' : 'reconnecting', '');
    const Socket =
      this.options.WebSocket ?? (globalThis as { WebSocket?: SocketConstructor }).WebSocket;
    if (!Socket) throw new Error('no WebSocket: pass one as options.WebSocket');
    const id = newConnectionId();
    const socket = new Socket(withConnection(this.options.url(), id, this.lastOpened));
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      this.lastOpened = id;
      this.attempt = 0;
      this.opens += 1;
      this.setStatus('open', '');
      for (const resolve of [...this.waitingOpen]) resolve();
      for (const handler of [...this.openHandlers]) handler();
    };
    socket.onmessage = (message) => {
      if (this.socket === socket && typeof message.data === 'string') this.receive(message.data);
    };
    socket.onerror = () => undefined; // the close that follows says what to do
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.failPending('the connection dropped');
      if (event.code === UNAUTHORIZED) {
        this.active = false;
        this.setStatus('closed', 'the token was refused: log in again');
        this.options.onUnauthorized?.();
        return;
      }
      if (!this.active) return;
      for (const handler of [...this.closeHandlers]) handler(event.code);
      this.attempt += 1;
      const cap = this.options.maxBackoffMs ?? 5_000;
      // Full jitter on half the wait: sockets dropped together do not come back together.
      const delay = Math.min(cap, 250 * 2 ** Math.min(this.attempt, 5)) * (0.5 + Math.random() / 2);
      this.setStatus('reconnecting', `dropped (${event.code}), reconnecting`);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.open();
      }, delay);
    };
  }

  private receive(raw: string): void {
    let frame: Frame;
    try {
      frame = JSON.parse(raw) as Frame;
    } catch {
      return;
    }
    if (typeof frame?.event !== 'string') return;
    if (frame.event.endsWith('.ack') && typeof frame.seq === 'number') {
      const pending = this.pending.get(frame.seq);
      if (pending && frame.event === `${pending.event}.ack`) {
        this.pending.delete(frame.seq);
        clearTimeout(pending.timer);
        if (frame.code === 0) pending.resolve(frame.data ?? {});
        else pending.reject(new RealtimeError(frame.message ?? 'refused', frame.reason));
      }
      return;
    }
    for (const handler of [...this.anyHandlers, ...(this.handlers.get(frame.event) ?? [])]) {
      try {
        handler(frame);
      } catch (error) {
        // One listener's bug must not stop the others, nor the socket.
        console.error(`a listener of ${frame.event} failed`, error);
      }
    }
  }

  private failPending(message: string): void {
    for (const [seq, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(new RealtimeError(`${pending.event}: ${message}`, 'DISCONNECTED'));
      this.pending.delete(seq);
    }
  }
}
