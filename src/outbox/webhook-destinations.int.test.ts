/**
 * The webhook sink refuses internal destinations at delivery time, after resolving the
 * host itself, before any connection. The only server here is on 127.0.0.1; every other
 * address is refused before a socket exists, so no test traffic leaves loopback.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { DestinationPolicy, type ResolvedAddress } from './destinations.js';
import { WebhookSink } from './webhook-sink.js';

const target = (url: string) => ({ url, secret: 'a-webhook-secret-0123456789' });
const event = { eventId: 'e-1', envelope: '{"event_id":"e-1"}', attempt: 1 };

void describe('webhook destinations at delivery time', () => {
  let server: Server;
  let port = 0;
  let requests = 0;
  let answer = 204;
  const sinks: WebhookSink[] = [];
  const sink = (destinations?: DestinationPolicy) => {
    const s = new WebhookSink({ timeoutMs: 2_000, ...(destinations ? { destinations } : {}) });
    sinks.push(s);
    return s;
  };

  before(async () => {
    server = createServer((req, res) => {
      requests += 1;
      req.resume();
      req.on('end', () =>
        res.writeHead(answer).end('internal: db password is hunter2, see http://10.0.0.7/'),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  beforeEach(() => {
    requests = 0;
    answer = 204;
  });
  after(async () => {
    for (const s of sinks) s.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  void it('by default refuses loopback, private and link-local targets, literal or by name', async () => {
    const refused: [string, string][] = [
      [`http://127.0.0.1:${port}/hook`, 'loopback'],
      [`http://localhost:${port}/hook`, 'loopback'],
      [`http://[::1]:${port}/hook`, 'loopback'],
      [`http://[::ffff:127.0.0.1]:${port}/hook`, 'loopback'],
      [`http://2130706433:${port}/hook`, 'loopback'],
      ['http://10.0.0.1:9/hook', 'private'],
      ['http://192.168.0.1/hook', 'private'],
      ['http://169.254.169.254/latest/meta-data/', 'link-local'],
      ['https://[fd00::1]/hook', 'unique-local'],
    ];
    const webhook = sink();
    for (const [url, reason] of refused) {
      const outcome = await webhook.deliver(target(url), event);
      assert.equal(outcome.kind, 'failed', url);
      assert.ok(
        outcome.kind === 'failed' && outcome.error.startsWith(`destination refused: ${reason}`),
        `${url}: ${JSON.stringify(outcome)}`,
      );
    }
    assert.equal(requests, 0, 'a refused destination was connected to');
  });

  void it('a host name is refused when it resolves to an internal address, and never connected', async () => {
    let lookups = 0;
    const resolveTo = (addresses: ResolvedAddress[]) => (): Promise<readonly ResolvedAddress[]> => {
      lookups += 1;
      return Promise.resolve(addresses);
    };
    for (const addresses of [
      [{ address: '10.0.0.5', family: 4 as const }],
      [{ address: '169.254.169.254', family: 4 as const }],
      [
        { address: '127.0.0.1', family: 4 as const },
        { address: '::1', family: 6 as const },
      ],
    ]) {
      const webhook = sink(new DestinationPolicy([], resolveTo(addresses)));
      const outcome = await webhook.deliver(target(`http://hooks.example.test:${port}/`), event);
      assert.equal(outcome.kind, 'failed', JSON.stringify(addresses));
    }
    assert.equal(lookups, 3, 'the sink resolved the name itself');
    assert.equal(requests, 0);
  });

  void it('connects only to a checked address of the name: the refused answers are dropped', async () => {
    // The name resolves to a private address and to loopback; only loopback is allowed.
    const resolver = () =>
      Promise.resolve([
        { address: '10.0.0.5', family: 4 as const },
        { address: '127.0.0.1', family: 4 as const },
      ]);
    const webhook = sink(new DestinationPolicy(['127.0.0.1'], resolver));
    const outcome = await webhook.deliver(target(`http://hooks.example.test:${port}/`), event);
    assert.deepEqual(outcome, { kind: 'delivered', status: 204 });
    assert.equal(requests, 1);
  });

  void it('an allow-listed loopback is delivered to; the answer body never reaches last_error', async () => {
    const webhook = sink(new DestinationPolicy(['127.0.0.0/8']));
    assert.deepEqual(await webhook.deliver(target(`http://127.0.0.1:${port}/`), event), {
      kind: 'delivered',
      status: 204,
    });
    answer = 500;
    assert.deepEqual(await webhook.deliver(target(`http://127.0.0.1:${port}/`), event), {
      kind: 'retryable',
      error: 'HTTP 500 Internal Server Error',
    });
    answer = 403;
    assert.deepEqual(await webhook.deliver(target(`http://127.0.0.1:${port}/`), event), {
      kind: 'failed',
      error: 'HTTP 403 Forbidden',
    });
    // Allowing 127.0.0.0/8 opens neither ::1 nor another private range.
    const other = await webhook.deliver(target('http://10.0.0.1:9/'), event);
    assert.equal(other.kind, 'failed');
    assert.equal(requests, 3);
  });
});
