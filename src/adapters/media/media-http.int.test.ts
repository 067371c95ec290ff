/**
 * The orchestrator client's failure handling against scripted HTTP servers on loopback (no
 * mediasoup needed): error kinds, close retries and their backoff, deadlines, keep-alive.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import {
  isMediaResourceNotFound,
  isMediaServerError,
} from '../../media-cluster/media-orchestrator.js';
import { AppError } from '../../shared/errors.js';
import { closeRetryDelayMs, HttpMediaOrchestrator } from './http-media-orchestrator.js';

type Script = (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void;

interface Scripted {
  url: string;
  requests: { method: string; url: string; token: string | undefined }[];
  connections: number;
  close(): Promise<void>;
}

/** An HTTP server whose n-th request (from 1) is answered by `script`. */
async function scripted(script: Script): Promise<Scripted> {
  const state: Scripted = { url: '', requests: [], connections: 0, close: () => Promise.resolve() };
  const server = http.createServer((req, res) => {
    state.requests.push({
      method: req.method ?? '',
      url: req.url ?? '',
      token: req.headers['x-internal-token'] as string | undefined,
    });
    req.resume();
    req.on('end', () => script(req, res, state.requests.length));
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};
const ok = (res: http.ServerResponse, data: unknown = {}) =>
  json(res, 200, { code: 0, message: 'success', data });
const fail = (res: http.ServerResponse, status: number, reason = 'X') =>
  json(res, status, { code: status, message: `failed ${status}`, reason });

function client(url: string, extra: { closeRetry?: number; timeoutMs?: number } = {}) {
  const sleeps: number[] = [];
  const orchestrator = new HttpMediaOrchestrator({
    baseUrl: url,
    internalToken: 'secret-token-1234',
    timeoutMs: extra.timeoutMs ?? 2_000,
    closeRetry: extra.closeRetry ?? 2,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
  });
  return { orchestrator, sleeps };
}

void describe('media orchestrator client: failures', () => {
  const servers: Scripted[] = [];
  const clients: HttpMediaOrchestrator[] = [];
  after(async () => {
    for (const c of clients) c.close();
    for (const s of servers) await s.close();
  });
  const setup = async (script: Script, extra?: { closeRetry?: number; timeoutMs?: number }) => {
    const server = await scripted(script);
    servers.push(server);
    const c = client(server.url, extra);
    clients.push(c.orchestrator);
    return { server, ...c };
  };

  void it('backs off 200 ms then 500 ms', () => {
    assert.deepEqual([0, 1, 2, 3].map(closeRetryDelayMs), [200, 500, 500, 500]);
  });

  void it('retries a close after 5xx and succeeds on the third attempt', async () => {
    const { server, orchestrator, sleeps } = await setup((_req, res, n) =>
      n < 3 ? fail(res, n === 1 ? 500 : 503) : ok(res, { closed: true }),
    );
    await orchestrator.closeTransport('t-1');
    assert.equal(server.requests.length, 3);
    assert.ok(
      server.requests.every(
        (r) => r.method === 'POST' && r.url === '/internal/v1/transports/t-1/close',
      ),
    );
    assert.ok(server.requests.every((r) => r.token === 'secret-token-1234'));
    assert.deepEqual(sleeps, [200, 500]);
  });

  void it('gives up after CloseRetry+1 attempts with a media server error', async () => {
    const { server, orchestrator, sleeps } = await setup((_req, res) => fail(res, 500), {
      closeRetry: 3,
    });
    const error = await orchestrator.closeProducer('p-1').then(
      () => assert.fail('close should fail'),
      (e: unknown) => e,
    );
    assert.ok(isMediaServerError(error), String(error));
    assert.ok(error instanceof AppError);
    assert.equal(error.kind, 'unavailable');
    assert.equal(error.message, '会议媒体服务暂不可用'); // the seed's words
    assert.equal(server.requests.length, 4);
    assert.deepEqual(sleeps, [200, 500, 500]);
  });

  void it('treats 404 on close as closed (no retry) and as not found elsewhere', async () => {
    const { server, orchestrator, sleeps } = await setup((_req, res) =>
      fail(res, 404, 'CONSUMER_NOT_FOUND'),
    );
    await orchestrator.closeConsumer('c-1');
    await orchestrator.closeProducer('p-1');
    await orchestrator.closeTransport('t-1');
    assert.equal(server.requests.length, 3);
    assert.deepEqual(sleeps, []);
    const error = await orchestrator.resumeConsumer('c-1').catch((e: unknown) => e);
    assert.ok(isMediaResourceNotFound(error), String(error));
    assert.ok(error instanceof AppError && error.kind === 'not_found');
    assert.equal(error.message, '会议资源不存在'); // the seed's words
    // closeRouter for a room unknown to the cache asks the server, and a 404 means closed.
    await orchestrator.closeRouter('123-456-789');
    assert.equal(server.requests.at(-1)?.url, '/internal/v1/rooms/123-456-789/router');
  });

  void it('does not retry what is not a close, nor a 400', async () => {
    const { server, orchestrator } = await setup((_req, res, n) =>
      n === 1 ? fail(res, 500) : fail(res, 400, 'MEDIA_BAD_PARAMETERS'),
    );
    assert.ok(isMediaServerError(await orchestrator.resumeConsumer('c').catch((e: unknown) => e)));
    const bad = await orchestrator.closeTransport('t').catch((e: unknown) => e);
    assert.ok(
      bad instanceof AppError && bad.kind === 'validation' && bad.code === 'MEDIA_BAD_PARAMETERS',
    );
    assert.equal(server.requests.length, 2);
  });

  void it('reports a refused token as a media server error', async () => {
    const { orchestrator } = await setup((_req, res) => fail(res, 401, 'INTERNAL_TOKEN_INVALID'));
    assert.ok(isMediaServerError(await orchestrator.createRouter('r').catch((e: unknown) => e)));
  });

  void it('times out a silent server', async () => {
    const { orchestrator } = await setup(() => undefined, { timeoutMs: 300, closeRetry: 1 });
    const started = Date.now();
    const error = await orchestrator.createRouter('111-222-333').catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    assert.ok(isMediaServerError(error), String(error));
    assert.match(String((error as Error).cause), /no answer within 300 ms/);
    assert.ok(elapsed >= 250 && elapsed < 2_000, `took ${elapsed} ms`);
  });

  void it('maps a refused connection to a media server error, retrying closes', async () => {
    const dead = await scripted(() => undefined);
    await dead.close();
    const { orchestrator, sleeps } = client(dead.url, { closeRetry: 1 });
    clients.push(orchestrator);
    assert.ok(
      isMediaServerError(await orchestrator.createTransport('r', 'send').catch((e: unknown) => e)),
    );
    assert.ok(isMediaServerError(await orchestrator.closeTransport('t').catch((e: unknown) => e)));
    assert.deepEqual(sleeps, [200]);
  });

  void it('keeps connections alive across calls', async () => {
    const { server, orchestrator } = await setup((_req, res) => ok(res, { paused: false }));
    for (let i = 0; i < 5; i++) await orchestrator.resumeConsumer(`c-${i}`);
    assert.equal(server.requests.length, 5);
    assert.equal(server.connections, 1);
  });

  void it('caches router info from createRouter and drops it on closeRouter', async () => {
    const caps = { codecs: [{ mimeType: 'audio/opus' }] };
    const { server, orchestrator } = await setup((req, res) =>
      req.url === '/internal/v1/routers'
        ? json(res, 201, {
            code: 0,
            data: { router_id: 'r-1', rtp_capabilities: caps, created: true },
          })
        : ok(res, { closed: true }),
    );
    assert.deepEqual(orchestrator.resolveRouterInfo('111-111-111'), {
      ok: false,
      routerId: '',
      rtpCapabilities: null,
    });
    await orchestrator.createRouter('111-111-111');
    assert.deepEqual(orchestrator.resolveRouterInfo('111-111-111'), {
      ok: true,
      routerId: 'r-1',
      rtpCapabilities: caps,
    });
    await orchestrator.closeRouter('111-111-111');
    // The cached id is used directly: no lookup by room.
    assert.equal(server.requests.at(-1)?.url, '/internal/v1/routers/r-1/close');
    assert.equal(server.requests.length, 2);
    assert.equal(orchestrator.resolveRouterInfo('111-111-111').ok, false);
  });
});
