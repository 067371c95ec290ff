/**
 * Child process of `bench/fanout.bench.ts`: the WebSocket clients (and, for the outbox
 * phase, a webhook receiver), so that they do not share a CPU core's event loop with the
 * server. Driven over IPC:
 *
 * - `connect {url, count, roomId}` → `connected {ok, failed}` (every client subscribed)
 * - `phase` → resets the records; `report {commits: [version, ms][]}` → `report {...}`
 * - `heal` → reconnects the clients the server closed → `healed {count}`
 * - `webhook` → `webhook {port}`: a local endpoint answering 204 and counting
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';

type Command =
  | { type: 'connect'; url: string; count: number; roomId: string }
  | { type: 'phase' }
  | { type: 'report'; commits: [number, number][] }
  | { type: 'heal' }
  | { type: 'webhook' }
  | { type: 'exit' };

/** Wall clock with sub-millisecond resolution, comparable across processes. */
const now = (): number => performance.timeOrigin + performance.now();
const VERSION_KEY = Buffer.from('"room_version":');

class Records {
  versions = new Int32Array(1 << 20);
  times = new Float64Array(1 << 20);
  length = 0;

  push(version: number, time: number): void {
    if (this.length === this.versions.length) {
      const versions = new Int32Array(this.length * 2);
      versions.set(this.versions);
      const times = new Float64Array(this.length * 2);
      times.set(this.times);
      this.versions = versions;
      this.times = times;
    }
    this.versions[this.length] = version;
    this.times[this.length] = time;
    this.length += 1;
  }
}

let records = new Records();
let url = '';
let roomId = '';
const sockets: (WebSocket | null)[] = [];
let closedCodes = new Map<number, number>();
let webhookHits = 0;

/** room_version without parsing the JSON: the hot path runs 40,000+ times a second. */
function versionOf(frame: Buffer): number {
  const at = frame.indexOf(VERSION_KEY);
  if (at < 0) return -1;
  let v = 0;
  for (let i = at + VERSION_KEY.length; i < frame.length; i++) {
    const c = frame[i]!;
    if (c < 48 || c > 57) break;
    v = v * 10 + (c - 48);
  }
  return v;
}

function open(index: number): Promise<boolean> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url}?token=u${index + 1}`, { perMessageDeflate: false });
    let subscribed = false;
    ws.on('message', (data: Buffer) => {
      if (!subscribed) {
        if (data.includes('room.subscribe.ack')) {
          subscribed = true;
          resolve(true);
        }
        return;
      }
      const version = versionOf(data);
      if (version > 0) records.push(version, now());
    });
    ws.on('open', () => {
      ws.send(JSON.stringify({ event: 'room.subscribe', seq: 1, data: { room_id: roomId } }));
    });
    ws.on('close', (code) => {
      if (sockets[index] === ws) sockets[index] = null;
      closedCodes.set(code, (closedCodes.get(code) ?? 0) + 1);
      if (!subscribed) resolve(false);
    });
    ws.on('error', () => undefined);
    sockets[index] = ws;
  });
}

async function openMany(indexes: number[]): Promise<{ ok: number; failed: number }> {
  let ok = 0;
  let failed = 0;
  // Batches, so the server's accept queue and the handshakes do not pile up.
  for (let i = 0; i < indexes.length; i += 200) {
    const results = await Promise.all(indexes.slice(i, i + 200).map(open));
    for (const r of results)
      if (r) ok += 1;
      else failed += 1;
  }
  return { ok, failed };
}

function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function report(commits: [number, number][]): Record<string, unknown> {
  const commitAt = new Map(commits);
  const latencies = new Float64Array(records.length);
  let n = 0;
  let first = Infinity;
  let last = 0;
  for (let i = 0; i < records.length; i++) {
    const committed = commitAt.get(records.versions[i]!);
    const at = records.times[i]!;
    first = Math.min(first, at);
    last = Math.max(last, at);
    if (committed !== undefined) latencies[n++] = at - committed;
  }
  const sorted = latencies.subarray(0, n).sort();
  const result = {
    frames: records.length,
    matched: n,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: n > 0 ? sorted[n - 1]! : NaN,
    spanMs: last - first,
    open: sockets.filter((s) => s !== null).length,
    closed: Object.fromEntries(closedCodes),
  };
  closedCodes = new Map();
  return result;
}

function send(message: Record<string, unknown>): void {
  process.send?.(message);
}

process.on('message', (command: Command) => {
  void (async () => {
    switch (command.type) {
      case 'connect': {
        url = command.url;
        roomId = command.roomId;
        const result = await openMany(Array.from({ length: command.count }, (_, i) => i));
        send({ type: 'connected', ...result });
        break;
      }
      case 'phase':
        records = new Records();
        send({ type: 'phase' });
        break;
      case 'report':
        send({ type: 'report', ...report(command.commits) });
        break;
      case 'heal': {
        const missing = sockets.flatMap((s, i) => (s === null ? [i] : []));
        const result = await openMany(missing);
        send({ type: 'healed', count: result.ok });
        break;
      }
      case 'webhook': {
        const server = createServer((req, res) => {
          req.resume();
          req.on('end', () => {
            webhookHits += 1;
            res.writeHead(204).end();
          });
        });
        server.keepAliveTimeout = 60_000;
        server.listen(0, '127.0.0.1', () => {
          send({
            type: 'webhook',
            port: (server.address() as AddressInfo).port,
            hits: webhookHits,
          });
        });
        break;
      }
      case 'exit':
        for (const s of sockets) s?.terminate();
        process.exit(0);
    }
  })();
});
send({ type: 'started' });
