/**
 * Test-only: a page script (bundled with mediasoup-client by esbuild) served from
 * 127.0.0.1 on a free port (the node is another origin), and a poll for what the pages
 * report. Every wait is generous: browsers, a node and a worker may share 2 loaded cores.
 */
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { bundlePage, PEER_PAGE } from '../../media-server/testing/chromium.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const WAIT_MS = 20_000;
/** Where browser tests leave their screenshots (git-ignored). */
export const RESULTS = path.join(HERE, '..', '..', '..', 'test-results');

/** Serves `/` (a page loading the bundle of `script`, a file of this folder). */
export async function startPageServer(script: string): Promise<{ server: Server; url: string }> {
  const js = await bundlePage(path.join(HERE, script));
  const server = createServer((req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(PEER_PAGE);
    } else if (req.url === '/peer.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(js);
    } else if (req.url === '/favicon.ico') {
      res.writeHead(204).end();
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}/` };
}

/** Polls `check` (every 250 ms) until it gives a value; fails after WAIT_MS naming `what`. */
export async function until<T>(
  check: () => Promise<T | undefined>,
  what: string | (() => Promise<string>),
): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const detail = typeof what === 'string' ? what : await what();
      throw new Error(`timed out after ${WAIT_MS} ms: ${detail}`);
    }
    await sleep(250);
  }
}
