/**
 * No access token reaches the log, however the URL carrying it arrives: a plain GET of
 * `/ws?token=…` (no Upgrade header), a WebSocket upgrade with a good or a bad token, an
 * upgrade of another path, a malformed request, a token on a REST route. Logs at `trace`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { TestClient } from '../ws/testing/ws-client.js';
import { loadConfig } from '../../main/config.js';
import { startNode, type RoomsNode } from '../../main/node.js';
import { client, TEST_NODE_ENV } from './auth-routes.contract.js';

describe('logs keep tokens out', () => {
  let dir: string;
  let node: RoomsNode;
  let host: string;
  let port: number;
  const lines: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-log-redaction-'));
    const config = loadConfig({
      ...TEST_NODE_ENV,
      ROOMS_DB_URL: join(dir, 'rooms.sqlite'),
      ROOMS_LOG_LEVEL: 'trace',
    });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    node = await startNode(config, pino({ level: 'trace' }, sink));
    const url = new URL(node.httpAddress);
    host = '127.0.0.1';
    port = Number(url.port);
  });
  after(async () => {
    await node?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Sends raw bytes and waits for the server to answer or hang up. */
  const raw = (request: string) =>
    new Promise<string>((resolve) => {
      const socket = connect(port, host, () => socket.write(request));
      let answer = '';
      socket.on('data', (d: Buffer) => (answer += d.toString()));
      socket.on('error', () => resolve(answer));
      socket.on('close', () => resolve(answer));
      setTimeout(() => socket.destroy(), 2_000).unref();
    });

  it('logs the /ws path with token=[redacted], on every path a URL with ?token= can take', async () => {
    const { token } = await client(node).signUp('logged-user');
    const secrets = [
      'SECRET-plain-get',
      'SECRET-two',
      'SECRET-three',
      'SECRET-rest',
      'SECRET-bad-escape',
    ];
    const base = `http://${host}:${port}`;
    // A plain GET (no Upgrade header): Fastify answers 404 and logs the request.
    assert.equal((await fetch(`${base}/ws?token=${token}`)).status, 404);
    assert.equal((await fetch(`${base}/ws?token=${secrets[0]}`)).status, 404);
    await fetch(`${base}/ws?x=1&token=${secrets[1]}&access_token=${secrets[2]}`);
    await fetch(`${base}/api/v1/users/me?token=${secrets[3]}`);
    await raw(`GET /ws?token=${secrets[4]}%zz HTTP/1.1\r\nHost: x\r\n\r\n`);
    // Upgrades: a good token, a bad one, another path.
    const good = await TestClient.connect(
      `ws://${host}:${port}/ws?token=${encodeURIComponent(token)}`,
    );
    assert.equal(good.closed, null);
    good.close();
    const bad = await TestClient.connect(`ws://${host}:${port}/ws?token=SECRET-bad-jwt`);
    assert.equal((await bad.waitClosed()).code, 4001);
    await raw(
      `GET /elsewhere?token=SECRET-other-path HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`,
    );
    // A request Node's parser refuses (its error carries the raw bytes, URL included).
    await raw(`GET /ws?token=SECRET-parse-error HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n`);
    await sleep(100);

    const log = lines.join('');
    for (const secret of [
      token,
      ...secrets,
      'SECRET-bad-jwt',
      'SECRET-other-path',
      'SECRET-parse-error',
    ]) {
      assert.ok(!log.includes(secret), `the log contains ${secret.slice(0, 24)}…`);
    }
    // A token's pieces are base64url: none of its signature reaches the log either.
    assert.ok(!log.includes(token.split('.')[2]!), 'the log contains the token signature');
    // The requests were logged, with their paths.
    assert.match(log, /"url":"\/ws\?token=\[redacted\]"/);
    assert.match(log, /"url":"\/ws\?x=1&token=\[redacted\]&access_token=\[redacted\]"/);
  });
});
