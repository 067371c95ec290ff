/**
 * One WebSocket to the node (`/ws?token=`), shared by every page: requests matched to their
 * `<event>.ack` by `seq`, S→C frames dispatched by event name, and a reconnect with backoff
 * after any drop (a node restart, a dead peer, 1001 on drain), with a visible status. After
 * each (re)open the `onOpen` handlers run again: the pages re-follow their rooms there (a
 * new socket follows nothing). A 4001 close (bad or expired token) does not reconnect.
 */
import { ref } from 'vue';

export interface Frame {
  event: string;
  seq?: number;
  code: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each event has its own shape
  data: any;
  message?: string;
  reason?: string;
  time?: string;
}

export type Status = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';

/** A refused request: the ACK's message (the REST errors' Chinese text) and reason code. */
export class WsError extends Error {
  constructor(
    message: string,
    readonly reason: string | undefined,
  ) {
    super(message);
  }
}

interface Pending {
  event: string;
  resolve: (data: unknown) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

const DEFAULT_TIMEOUT_MS = 10_000;

export class RealtimeClient {
  readonly status = ref<Status>('idle');
  /** Why the socket is not open (shown with the status). */
  readonly detail = ref('');
  /** How many times the socket opened (1 + reconnects). */
  opens = 0;
  private socket: WebSocket | null = null;
  private url: (() => string) | null = null;
  private seq = 0;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly pending = new Map<number, Pending>();
  private readonly handlers = new Map<string, Set<(frame: Frame) => void>>();
  private readonly openHandlers = new Set<() => void>();
  private readonly closeHandlers = new Set<() => void>();
  private readonly waitingOpen = new Set<() => void>();
  private onUnauthorized: () => void = () => undefined;

  /** Opens the socket (the URL is computed again at each reconnect: the token may change). */
  connect(url: () => string, onUnauthorized: () => void): void {
    this.url = url;
    this.onUnauthorized = onUnauthorized;
    if (!this.socket) this.open();
  }

  /** Closes for good (log out). */
  close(): void {
    this.url = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000, 'bye');
    this.failPending('连接已关闭');
    this.status.value = 'closed';
  }

  /** Drops the socket as a network failure would (tests and the "reconnect" button). */
  drop(): void {
    this.socket?.close(4000, 'dropped by the client');
  }

  get isOpen(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /** Sends a C→S event; resolves with the ACK's data, rejects with its message. */
  async request<T = unknown>(
    event: string,
    data: unknown,
    options: { timeoutMs?: number } = {},
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!this.isOpen) await this.whenOpen(timeoutMs);
    const seq = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(seq);
        reject(new WsError(`${event}: 服务器未应答`, 'TIMEOUT'));
      }, timeoutMs);
      this.pending.set(seq, { event, resolve: resolve as (d: unknown) => void, reject, timer });
      this.socket!.send(JSON.stringify({ event, seq, data }));
    });
  }

  /** Listens to an S→C event; returns the function that stops listening. */
  on(event: string, handler: (frame: Frame) => void): () => void {
    let set = this.handlers.get(event);
    if (!set) this.handlers.set(event, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  /** Runs `handler` now if open, and after every reconnect; returns its remover. */
  onOpen(handler: () => void): () => void {
    this.openHandlers.add(handler);
    if (this.isOpen) handler();
    return () => this.openHandlers.delete(handler);
  }

  /** Runs `handler` after every drop (not after {@link close}); returns its remover. */
  onClose(handler: () => void): () => void {
    this.closeHandlers.add(handler);
    return () => this.closeHandlers.delete(handler);
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
        reject(new WsError('实时连接未就绪，请稍后重试', 'NOT_CONNECTED'));
      }, timeoutMs);
      this.waitingOpen.add(done);
    });
  }

  private open(): void {
    if (!this.url) return;
    this.status.value = this.attempt === 0 ? 'connecting' : 'reconnecting';
    const socket = new WebSocket(this.url());
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      this.attempt = 0;
      this.opens += 1;
      this.status.value = 'open';
      this.detail.value = '';
      for (const resolve of [...this.waitingOpen]) resolve();
      for (const handler of [...this.openHandlers]) handler();
    };
    socket.onmessage = (message) => {
      if (this.socket === socket && typeof message.data === 'string') this.receive(message.data);
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.failPending('连接已断开');
      if (event.code === 4001) {
        this.status.value = 'closed';
        this.detail.value = '登录已过期，请重新登录';
        this.url = null;
        this.onUnauthorized();
        return;
      }
      if (!this.url) return;
      for (const handler of [...this.closeHandlers]) handler();
      this.attempt += 1;
      const delay =
        Math.min(5_000, 250 * 2 ** Math.min(this.attempt, 5)) * (0.5 + Math.random() / 2);
      this.status.value = 'reconnecting';
      this.detail.value = `连接断开 (${event.code})，正在重连…`;
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
    if (frame.event.endsWith('.ack') && typeof frame.seq === 'number') {
      const pending = this.pending.get(frame.seq);
      if (pending && frame.event === `${pending.event}.ack`) {
        this.pending.delete(frame.seq);
        clearTimeout(pending.timer);
        if (frame.code === 0) pending.resolve(frame.data ?? {});
        else pending.reject(new WsError(frame.message ?? '操作失败', frame.reason));
        return;
      }
    }
    for (const handler of [...(this.handlers.get(frame.event) ?? [])]) {
      try {
        handler(frame);
      } catch (error) {
        console.error(`handler of ${frame.event} failed`, error);
      }
    }
  }

  private failPending(message: string): void {
    for (const [seq, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(new WsError(`${pending.event}: ${message}`, 'DISCONNECTED'));
      this.pending.delete(seq);
    }
  }
}

/** The app's socket. */
export const realtime = new RealtimeClient();

export function wsUrl(accessToken: string): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/ws?token=${encodeURIComponent(accessToken)}`;
}
