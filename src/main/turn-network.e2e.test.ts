/**
 * A client on a hard network still gets media through TURN, and does not without it: real
 * Chromium pages of the web client, Debian's coturn, and this machine's network namespaces
 * (src/testing/hard-network.ts). Guest B's Chromium runs in a namespace behind NAT whose
 * firewall drops all UDP and every TCP port but the nodes' HTTP and the TURN server's: B
 * can reach the media server neither over UDP nor over ICE-TCP. Host A's Chromium is on
 * the server's side.
 *
 * Three nodes (embedded SQLite and media server on the server's address): one hands out
 * `turn:…?transport=tcp` with credentials from the secret coturn checks (`ROOMS_TURN_*`),
 * one `turns:…?transport=tcp` (TURN over TLS, coturn with a certificate for the server's
 * address; B's Chromium is told to accept it, as it would trust a real one), the other none.
 * On the first two, A and B each receive the other's audio and video, and the media server
 * sees B's transport from coturn's relay address (not from the NAT's); coturn's log shows
 * the TLS session for the second. On the third, B's page gets no media and its transports
 * never connect.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { types } from 'mediasoup';
import type { Browser, Page } from 'playwright-core';
import { browserSkipReason, CHROMIUM, launchChromium } from '../media-server/testing/chromium.js';
import { hardNetwork, hardNetworkSkipReason, type HardNetwork } from '../testing/hard-network.js';
import { startMeetingNode, type MeetingNode } from './testing/meeting-node.js';
import {
  buildWebClient,
  PAGE_WAIT_MS,
  received,
  receivesMediaOf,
  signUp,
} from './testing/web-client-pages.js';

const SECRET = 'turn-network-test-shared-secret';

const skip = browserSkipReason() || hardNetworkSkipReason();

/** A free TCP port on `ip`. */
function freePortOn(ip: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, ip, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on `ip:port`. */
async function listening(ip: string, port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, ip, () => resolve(true));
      socket.once('error', () => resolve(false));
      socket.setTimeout(500, () => resolve(false));
    }).catch(() => false);
    if (up) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${ip}:${port}`);
    await sleep(100);
  }
}

void describe('TURN for a client behind NAT without UDP', { skip }, () => {
  let network: HardNetwork;
  let coturn: ChildProcess | undefined;
  let coturnLog = '';
  let dir: string;
  let withTurn: MeetingNode;
  let withTls: MeetingNode;
  let without: MeetingNode;
  let server: Browser;
  let client: Browser;

  before(async () => {
    buildWebClient();
    network = hardNetwork();
    const ip = network.serverIp;
    dir = await mkdtemp(path.join(tmpdir(), 'turn-network-'));
    const turnPort = await freePortOn(ip);
    const tlsPort = await freePortOn(ip);
    const [cert, key] = [path.join(dir, 'turn.crt'), path.join(dir, 'turn.key')];
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'],
        ...['-nodes', '-days', '1', '-subj', '/CN=turn.echochat.test'],
        ...['-addext', `subjectAltName=IP:${ip}`, '-keyout', key, '-out', cert],
      ],
      { stdio: 'ignore' },
    );
    coturn = spawn(
      'turnserver',
      [
        ...['-n', '-v', '--no-cli', '--log-file=stdout', '--simple-log'], // -v: sessions
        ...[`--listening-ip=${ip}`, `--listening-port=${turnPort}`, `--relay-ip=${ip}`],
        ...['--min-port=41000', '--max-port=41199', '--no-dtls', '--no-udp'],
        ...[`--tls-listening-port=${tlsPort}`, `--cert=${cert}`, `--pkey=${key}`],
        ...['--use-auth-secret', `--static-auth-secret=${SECRET}`, '--realm=echochat.test'],
        ...[`--allowed-peer-ip=${ip}`, `--pidfile=${path.join(dir, 'turn.pid')}`],
        `--userdb=${path.join(dir, 'turn.db')}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    coturn.stdout!.on('data', (chunk: Buffer) => (coturnLog += chunk.toString('utf8')));
    coturn.stderr!.on('data', (chunk: Buffer) => (coturnLog += chunk.toString('utf8')));
    await listening(ip, turnPort);
    await listening(ip, tlsPort);
    const media = (min: number) => ({
      ROOMS_HTTP_HOST: ip,
      ROOMS_MEDIA_LISTEN_IP: ip,
      ROOMS_MEDIA_RTC_MIN_PORT: String(min),
      ROOMS_MEDIA_RTC_MAX_PORT: String(min + 499),
    });
    withTurn = await startMeetingNode([], {
      ...media(40_000),
      ROOMS_TURN_URLS: `turn:${ip}:${turnPort}?transport=tcp`,
      ROOMS_TURN_SECRET: SECRET,
    });
    withTls = await startMeetingNode([], {
      ...media(41_500),
      ROOMS_TURN_URLS: `turns:${ip}:${tlsPort}?transport=tcp`,
      ROOMS_TURN_SECRET: SECRET,
    });
    without = await startMeetingNode([], media(40_500));
    const origins = [withTurn, withTls, without].map((n) => n.node.httpAddress);
    network.allowTcp([turnPort, tlsPort, ...origins.map((o) => Number(new URL(o).port))]);
    // Plain http on a non-loopback address: the pages may still use the camera there.
    const args = [`--unsafely-treat-insecure-origin-as-secure=${origins.join(',')}`];
    server = await launchChromium({ args });
    client = await launchChromium({
      // The test's own certificate authority: what a real TURN server's certificate is signed by.
      args: [...args, '--ignore-certificate-errors'],
      executable: network.wrap(CHROMIUM),
    });
  });
  after(async () => {
    await client?.close();
    await server?.close();
    await withTurn?.close();
    await withTls?.close();
    await without?.close();
    coturn?.kill('SIGKILL');
    network?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A signs up on `node` and opens a meeting, B joins it: both pages and ids. */
  async function meeting(node: MeetingNode, tag: string) {
    const open = async (browser: Browser) => {
      const page = await (await browser.newContext()).newPage();
      page.setDefaultTimeout(PAGE_WAIT_MS);
      await page.goto(`${node.node.httpAddress}/`);
      return page;
    };
    const a = await open(server);
    const idA = await signUp(a, `host_${tag}`);
    await a.getByLabel('会议标题').fill(`TURN ${tag}`);
    await a.locator('[data-test=create-meeting]').click();
    await a.waitForURL(/\/meeting\/\d{3}-\d{3}-\d{3}$/);
    const code = (await a.locator('[data-test=room-code]').textContent())!;
    const b = await open(client);
    const idB = await signUp(b, `guest_${tag}`);
    await b.getByLabel('会议号').fill(code);
    await b.locator('[data-test=join-meeting]').click();
    await b.waitForURL(new RegExp(`/meeting/${code}$`));
    return { a, b, idA, idB, code };
  }

  /** The WebRTC transports B's producers are on, on `node`'s media server. */
  function transportsOf(node: MeetingNode, userId: number): types.WebRtcTransport[] {
    const { registry } = node.node.media.server!;
    return registry.roomCodes
      .flatMap((room) => registry.producersOfRoom(room))
      .filter((p) => p.transportEntry.peerId === String(userId))
      .map((p) => p.transportEntry.transport as types.WebRtcTransport);
  }

  /** B's transports on `node` are seen from coturn's relay address, not from the NAT. */
  function relayedThroughCoturn(node: MeetingNode, idB: number): void {
    const tuples = transportsOf(node, idB).map((t) => t.iceSelectedTuple);
    assert.ok(tuples.length > 0, 'B produces');
    for (const tuple of tuples) {
      // Over UDP from the relay: the NAT may not send UDP at all.
      assert.deepEqual([tuple?.remoteIp, tuple?.protocol], [network.serverIp, 'udp']);
    }
  }

  /** A scenario's pages are closed once checked: the next one runs beside no media of theirs. */
  const closePages = async ({ a, b }: { a: Page; b: Page }) => {
    await a.context().close();
    await b.context().close();
  };

  const describePage = (page: Page) => async () =>
    `${await page.locator('main').innerText()}\ncoturn:\n${coturnLog.slice(-2_000)}`;

  void it('relays B’s media through TURN over TCP, and B gets none without TURN', async () => {
    const relayed = await meeting(withTurn, 'turn');
    await receivesMediaOf(relayed.b, relayed.idA, describePage(relayed.b));
    await receivesMediaOf(relayed.a, relayed.idB, describePage(relayed.a));
    relayedThroughCoturn(withTurn, relayed.idB);
    await closePages(relayed);

    const blocked = await meeting(without, 'none');
    // The same page flow and signalling; no path for the media: nothing arrives in 10 s.
    await sleep(10_000);
    const got = (await received(blocked.b)).filter((r) => r.bytes > 0);
    assert.deepEqual(got, [], 'no media without TURN');
    for (const transport of transportsOf(without, blocked.idB)) {
      assert.equal(transport.iceSelectedTuple, undefined, 'B’s transport never connected');
    }
    await closePages(blocked);
  });

  void it('relays B’s media through TURN over TLS (turns:)', async () => {
    const before = coturnLog.length;
    const relayed = await meeting(withTls, 'tls');
    await receivesMediaOf(relayed.b, relayed.idA, describePage(relayed.b));
    await receivesMediaOf(relayed.a, relayed.idB, describePage(relayed.a));
    relayedThroughCoturn(withTls, relayed.idB);
    // coturn names each allocation's user (`<expiry>:<user id>`) and, over TLS, its cipher.
    const session = new RegExp(`new, realm=<[^>]+>, username=<\\d+:${relayed.idB}>, .*method=TLS`);
    assert.match(coturnLog.slice(before), session);
    await closePages(relayed);
  });
});
