// Receiving side of `bench:media` and `bench:voice-media` (bench/rtp.ts), run in a worker
// thread so that counting packets does not compete with sending on the main thread. Plain
// JS: worker threads do not get tsx's loader. Counts RTP packets (not RTCP) on its sockets
// into a shared counter: counter[0] those in time, counter[1] those that came more than
// `lateMs` after they were sent (the sender stamps the payload's first 8 bytes with its
// clock, `performance.timeOrigin + performance.now()`, which every thread shares; null:
// all count as in time). Posts its ports once bound; closes on any message.
import dgram from 'node:dgram';
import { parentPort, workerData } from 'node:worker_threads';

const { sockets, counter, lateMs } = workerData;
const count = new Int32Array(counter);
const bound = [];

/** Where an RTP packet's payload starts: after the CSRCs and the header extension. */
function payloadOffset(msg) {
  let offset = 12 + 4 * (msg[0] & 0x0f);
  if (msg[0] & 0x10) offset += 4 + 4 * msg.readUInt16BE(offset + 2);
  return offset;
}

for (let i = 0; i < sockets; i++) {
  const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024 });
  socket.on('message', (msg) => {
    const pt = (msg[1] ?? 0) & 0x7f;
    if (pt >= 72 && pt <= 79) return; // 72-79: RTCP (200-207)
    let late = false;
    if (lateMs !== null) {
      const offset = payloadOffset(msg);
      if (offset + 8 <= msg.length) {
        late = performance.timeOrigin + performance.now() - msg.readDoubleBE(offset) > lateMs;
      }
    }
    Atomics.add(count, late ? 1 : 0, 1);
  });
  await new Promise((resolve) => socket.bind(0, '127.0.0.1', resolve));
  bound.push(socket);
}
parentPort.postMessage({ ports: bound.map((s) => s.address().port) });
parentPort.on('message', () => {
  for (const s of bound) s.close();
  parentPort.close();
});
