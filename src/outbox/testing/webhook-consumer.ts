/**
 * Test-only webhook consumer on 127.0.0.1:0: verifies signatures against the raw body,
 * records every request, answers what the test scripts, and checks the relay's promises
 * (one event never in flight twice, as it happens; a room's order, afterwards).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseEnvelope, type RoomEventEnvelope } from '../../cell/envelope.js';
import { SIGNATURE_HEADER, verifyWebhookSignature } from '../signature.js';

export interface ReceivedRequest {
  readonly envelope: RoomEventEnvelope;
  readonly signatureOk: boolean;
  readonly attemptHeader: string | undefined;
  readonly receivedAtMs: number;
  /** Position among every receipt and answer of this consumer. */
  readonly seq: number;
  /** The status answered (set once answered). */
  status?: number;
}

/** Decides the answer to one request; may wait (a slow or hung consumer); 0 drops the connection. */
export type Responder = (request: ReceivedRequest, nth: number) => number | Promise<number>;

export class WebhookConsumer {
  readonly received: ReceivedRequest[] = [];
  /** Event ids answered 2xx, in answer order. */
  readonly acked: string[] = [];
  /** Broken promises seen as they happened (a test asserts this stays empty). */
  readonly violations: string[] = [];
  private readonly inFlight = new Set<string>();
  /** Event id → seq of its first 2xx answer. */
  private readonly firstAck = new Map<string, number>();
  private seq = 0;
  private server: Server | null = null;
  url = '';

  constructor(
    readonly secret: string,
    public respond: Responder = () => 200,
  ) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void readBody(req).then(async (raw) => {
        const envelope = parseEnvelope(raw.toString('utf8'));
        const record: ReceivedRequest = {
          envelope,
          signatureOk: verifyWebhookSignature(this.secret, raw, req.headers[SIGNATURE_HEADER]),
          attemptHeader: header(req, 'x-rooms-attempt'),
          receivedAtMs: Date.now(),
          seq: ++this.seq,
        };
        if (this.inFlight.has(envelope.event_id)) {
          const earlier = this.received
            .filter((r) => r.envelope.event_id === envelope.event_id)
            .map((r) => `attempt ${r.attemptHeader} at ${r.receivedAtMs}`);
          this.violations.push(
            `event ${envelope.event_id} delivered twice at the same time: attempt ${record.attemptHeader} at ${record.receivedAtMs} while ${earlier.join(', ')}`,
          );
        }
        this.received.push(record);
        this.inFlight.add(envelope.event_id);
        let status = 500;
        try {
          status = record.signatureOk ? await this.respond(record, this.received.length) : 401;
        } finally {
          this.inFlight.delete(envelope.event_id);
          record.status = status;
          if (status >= 200 && status < 300) {
            this.acked.push(envelope.event_id);
            if (!this.firstAck.has(envelope.event_id))
              this.firstAck.set(envelope.event_id, ++this.seq);
          }
          if (status === 0) res.destroy();
          else if (!res.destroyed) res.writeHead(status).end(status >= 300 ? 'nope' : 'ok');
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  /** Ids of the events answered 2xx at least once. */
  deliveredIds(): Set<string> {
    return new Set(this.firstAck.keys());
  }

  /**
   * Per-room order, afterwards: `order` lists each room's event ids in room_version order;
   * a request for one of them is a violation unless every earlier one was already
   * answered 2xx when it arrived.
   */
  orderViolations(order: ReadonlyMap<string, readonly string[]>): string[] {
    const out: string[] = [];
    const position = new Map<string, { room: string; index: number }>();
    for (const [room, ids] of order) ids.forEach((id, index) => position.set(id, { room, index }));
    for (const r of this.received) {
      const at = position.get(r.envelope.event_id);
      if (!at) continue;
      const earlier = order.get(at.room)!.slice(0, at.index);
      const missing = earlier.find((id) => (this.firstAck.get(id) ?? Infinity) > r.seq);
      if (missing) {
        out.push(`room ${at.room}: v${r.envelope.room_version} sent before ${missing} was acked`);
      }
    }
    return out;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
