/**
 * The in-process transport against a real media server: every answer the same as over
 * HTTP (successes, the server's validation reason, not found, a refused token), no socket
 * opened, a deadline, and a closed server reported as a media server error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isMediaServerError } from '../../meeting/media-orchestrator.js';
import {
  mediaSkipReason,
  startTestMediaServer,
  TEST_TOKEN,
} from '../../media-server/testing/harness.js';
import type { MediaServer } from '../../media-server/server.js';
import { AppError } from '../../shared/errors.js';
import { HttpMediaOrchestrator } from './http-media-orchestrator.js';
import { MediaInProcess } from './media-in-process.js';

function orchestrators(server: MediaServer, token = TEST_TOKEN) {
  const common = { baseUrl: server.url, internalToken: token, timeoutMs: 5_000, closeRetry: 0 };
  return {
    http: new HttpMediaOrchestrator(common),
    inProcess: new HttpMediaOrchestrator({
      ...common,
      transport: new MediaInProcess({
        server: server.http,
        internalToken: token,
        timeoutMs: 5_000,
      }),
    }),
  };
}

/** What a call gave, as a value: its data, or its error's kind, code and message. */
async function outcome(call: () => Promise<unknown>) {
  try {
    return { ok: await call() };
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    return { kind: error.kind, code: error.code, message: error.message };
  }
}

void describe('media orchestrator in process', { skip: mediaSkipReason() }, () => {
  let server: MediaServer;
  let connections = 0;
  before(async () => {
    server = await startTestMediaServer();
    server.http.server.on('connection', () => connections++);
  });
  after(() => server.close());

  void it('answers as HTTP does, through the same routes, without a socket', async () => {
    const { http, inProcess } = orchestrators(server);
    const router = await inProcess.createRouter('100-200-300');
    assert.equal(connections, 0, 'no connection to the listener');
    // The same router from both (the server's create is idempotent per room).
    assert.equal((await http.createRouter('100-200-300')).routerId, router.routerId);
    const transport = await inProcess.createTransport('100-200-300', 'send', 'peer-1');
    assert.ok(transport.id && transport.iceCandidates.length > 0);
    const cases: [string, (o: HttpMediaOrchestrator) => Promise<unknown>][] = [
      // The server's validation reason: no such direction.
      ['bad direction', (o) => o.createTransport('100-200-300', 'sideways' as 'send')],
      ['unknown consumer', (o) => o.resumeConsumer('no-such-consumer')],
      ['unknown room', (o) => o.createTransport('999-999-999', 'recv')],
      ['close twice', (o) => o.closeTransport(transport.id)],
    ];
    for (const [what, call] of cases) {
      assert.deepEqual(await outcome(() => call(inProcess)), await outcome(() => call(http)), what);
    }
    const refused = orchestrators(server, 'not-the-token');
    const wrong = await refused.inProcess.createRouter('100-200-300').catch((e: unknown) => e);
    assert.ok(isMediaServerError(wrong), 'a refused token is a media server error, as over HTTP');
    assert.ok(isMediaServerError(await refused.http.createRouter('100-200-300').catch((e) => e)));
    for (const o of [http, inProcess, refused.http, refused.inProcess]) o.close();
  });

  void it('gives up on a server that does not answer within the deadline', async () => {
    const silent = new MediaInProcess({
      server: { inject: () => new Promise(() => undefined) } as never,
      internalToken: TEST_TOKEN,
      timeoutMs: 200,
    });
    const error = await silent.call('GET', '/internal/info').catch((e: unknown) => e);
    assert.ok(isMediaServerError(error), String(error));
    assert.match(String((error as Error).cause), /no answer within 200 ms/);
  });

  void it('reports a server that has closed as a media server error', async () => {
    const closing = await startTestMediaServer();
    const { inProcess } = orchestrators(closing);
    await closing.close();
    const error = await inProcess.createRouter('100-200-301').catch((e: unknown) => e);
    assert.ok(isMediaServerError(error), String(error));
  });
});
