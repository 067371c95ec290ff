/**
 * Test-only WebSocket helpers: HS256 tokens shaped like the accounts' (sub = user id,
 * app_code), an authenticator for them, and a client that records frames and acks.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { jwtVerify, SignJWT } from 'jose';
import { WebSocket } from 'ws';
import type { AuthenticateToken } from '../hub.js';

const ISSUER = 'echochat-rooms';

export function testTokens(secret = 'a-test-secret-of-at-least-32-bytes!!') {
  const key = new TextEncoder().encode(secret);
  return {
    async sign(userId: string, appCode = 'default', username = `user${userId}`): Promise<string> {
      const nowS = Math.floor(Date.now() / 1000);
      return new SignJWT({ app_code: appCode, username })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(userId)
        .setIssuer(ISSUER)
        .setIssuedAt(nowS)
        .setExpirationTime(nowS + 3600)
        .sign(key);
    },
    authenticate: (async (token) => {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: ISSUER });
        if (typeof payload.sub !== 'string' || typeof payload.app_code !== 'string') return null;
        return { userId: payload.sub, appCode: payload.app_code };
      } catch {
        return null;
      }
    }) satisfies AuthenticateToken,
  };
}

export interface Frame {
  event: string;
  seq?: number;
  data: Record<string, unknown>;
  code: number;
  message?: string;
  reason?: string;
  time: string;
}

/** A client that keeps every frame it receives and how it was closed. */
export class TestClient {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | null = null;
  private seq = 0;
  private readonly waiters = new Set<() => void>();
  /** The TCP socket under the WebSocket, from its upgrade response. */
  private tcp: Socket | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.once('upgrade', (response: IncomingMessage) => (this.tcp = response.socket));
    ws.on('message', (data: Buffer) => {
      this.frames.push(JSON.parse(data.toString('utf8')) as Frame);
      this.notify();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.notify();
    });
    ws.on('error', () => undefined);
  }

  /** Connects; resolves once open (or closed, for a refused token). */
  static connect(url: string): Promise<TestClient> {
    const client = new TestClient(new WebSocket(url));
    return new Promise((resolve) => {
      client.ws.once('open', () => resolve(client));
      client.ws.once('close', () => resolve(client));
    });
  }

  /**
   * The client's path is gone, as after a network switch: it reads nothing more, so it
   * answers no ping and no close frame, and the server notices only by itself.
   */
  losePath(): void {
    this.tcp?.pause();
  }

  /** Sends a C→S frame and resolves with its ACK. */
  async request(event: string, data: Record<string, unknown>): Promise<Frame> {
    const seq = ++this.seq;
    this.ws.send(JSON.stringify({ event, seq, data }));
    return this.waitFor((f) => f.event === `${event}.ack` && f.seq === seq);
  }

  /** Frames of one event name, in arrival order. */
  events(event: string): Frame[] {
    return this.frames.filter((f) => f.event === event);
  }

  waitFor(match: (frame: Frame) => boolean, timeoutMs = 5_000): Promise<Frame> {
    return this.until(() => this.frames.find(match), timeoutMs);
  }

  waitClosed(timeoutMs = 5_000): Promise<{ code: number; reason: string }> {
    return this.until(() => this.closed, timeoutMs);
  }

  async until<T>(check: () => T | null | undefined | false, timeoutMs = 5_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = check();
      if (value) return value;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('condition not met in time');
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(left, 100));
        this.waiters.add(done);
      });
    }
  }

  close(): void {
    this.ws.terminate();
  }

  private notify(): void {
    for (const wake of [...this.waiters]) wake();
  }
}
