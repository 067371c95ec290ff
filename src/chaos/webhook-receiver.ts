/**
 * The webhook consumer of the chaos run: records every delivery it is sent (event id, room,
 * version, attempt, arrival order) and answers a seeded share of them 503 on purpose, so the
 * outbox retries, reorders nothing and still delivers every event at least once.
 */
import { createServer, type Server } from 'node:http';
import type { Prng } from './prng.js';

export interface Delivery {
  /** Arrival order over the whole run (0, 1, 2…). */
  readonly seq: number;
  readonly eventId: string;
  readonly appCode: string;
  readonly roomId: string;
  readonly roomVersion: number;
  readonly type: string;
  readonly attempt: number;
  /** Whether it was answered 2xx (a refused delivery is recorded too). */
  readonly accepted: boolean;
  readonly atMs: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly deliveries: Delivery[];
  close(): Promise<void>;
}

interface Envelope {
  event_id: string;
  app_code: string;
  room_id: string;
  room_version: number;
  type: string;
}

export async function startWebhookReceiver(
  prng: Prng,
  failShare: number,
): Promise<WebhookReceiver> {
  const deliveries: Delivery[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let envelope: Envelope;
      try {
        envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Envelope;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const accepted = !prng.chance(failShare);
      deliveries.push({
        seq: deliveries.length,
        eventId: envelope.event_id,
        appCode: envelope.app_code,
        roomId: envelope.room_id,
        roomVersion: envelope.room_version,
        type: envelope.type,
        attempt: Number(req.headers['x-rooms-attempt'] ?? 0),
        accepted,
        atMs: Date.now(),
      });
      res.writeHead(accepted ? 200 : 503).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}/hook`,
    deliveries,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
