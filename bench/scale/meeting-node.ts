/**
 * Child process of the `meetings` dimension: one real node (bench/bench-node.ts: the
 * embedded backend, the embedded media server with one worker) in a process of its own, so
 * that the clients' work does not run on its event loop and its memory is the node's alone.
 * Sends `ready {url}` once listening; answers `memory` with `memory {rss}`; `exit` closes it.
 */
import { openBenchNode } from '../bench-node.js';

type Command = { type: 'memory' } | { type: 'exit' };

const { base, close } = await openBenchNode(false, { ROOMS_MEDIA_WORKERS: '1' });
const send = (message: Record<string, unknown>) => process.send?.(message);

process.on('message', (command: Command) => {
  void (async () => {
    switch (command.type) {
      case 'memory':
        send({ type: 'memory', rss: process.memoryUsage().rss });
        break;
      case 'exit':
        await close();
        process.exit(0);
    }
  })();
});
// A bench that died leaves no node behind.
process.once('disconnect', () => void close().finally(() => process.exit(0)));
send({ type: 'ready', url: base });
