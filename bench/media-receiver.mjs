// Receiving side of `bench:media`, run in a worker thread so that counting packets does not
// compete with sending on the main thread. Plain JS: worker threads do not get tsx's loader.
// Counts RTP packets (not RTCP) on its sockets into a shared counter; posts its ports once
// bound; closes on any message.
import dgram from 'node:dgram';
import { parentPort, workerData } from 'node:worker_threads';

const { sockets, counter } = workerData;
const count = new Int32Array(counter);
const bound = [];

for (let i = 0; i < sockets; i++) {
  const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024 });
  socket.on('message', (msg) => {
    const pt = (msg[1] ?? 0) & 0x7f;
    if (pt < 72 || pt > 79) Atomics.add(count, 0, 1); // 72-79: RTCP (200-207)
  });
  await new Promise((resolve) => socket.bind(0, '127.0.0.1', resolve));
  bound.push(socket);
}
parentPort.postMessage({ ports: bound.map((s) => s.address().port) });
parentPort.on('message', () => {
  for (const s of bound) s.close();
  parentPort.close();
});
