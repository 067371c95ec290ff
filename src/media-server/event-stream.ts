/**
 * `GET /internal/v1/events`: the media events as server-sent events, one JSON object per
 * `data:` line, `id:` = the event's `seq`. A client that reconnects with `Last-Event-ID`
 * (or `?after=<seq>`) first gets the buffered events it missed.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { MediaEvent, MediaEventBus } from './events.js';

/** Keeps idle proxies and clients from timing the stream out. */
const HEARTBEAT_MS = 15_000;

const frame = (event: MediaEvent): string => `id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`;

export function registerEventStream(app: FastifyInstance, bus: MediaEventBus): void {
  /** The open streams, each with its clean-up. */
  const open = new Map<ServerResponse, () => void>();

  app.get('/internal/v1/events', (request, reply) => {
    const header = request.headers['last-event-id'];
    const query = request.query as { after?: string };
    const after = Number(typeof header === 'string' ? header : (query.after ?? bus.lastSeq));
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    // Replay and subscribe in one synchronous step: no event can slip in between.
    const from = Number.isFinite(after) ? after : bus.lastSeq;
    // An ended stream takes no more writes (a late one would be an unhandled stream error).
    const send = (text: string) => {
      if (!res.writableEnded && !res.destroyed) res.write(text);
    };
    for (const event of bus.since(from)) send(frame(event));
    const unsubscribe = bus.subscribe((event) => send(frame(event)));
    send(': ready\n\n');
    const heartbeat = setInterval(() => send(': ping\n\n'), HEARTBEAT_MS);
    const stop = () => {
      clearInterval(heartbeat);
      unsubscribe();
      open.delete(res);
    };
    open.set(res, stop);
    res.on('close', stop);
    res.on('error', stop);
  });

  // Hijacked responses would keep `app.close()` waiting: end them first.
  app.addHook('preClose', (done) => {
    for (const [res, stop] of [...open]) {
      stop();
      res.end();
    }
    done();
  });
}
