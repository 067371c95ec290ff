import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { openSqlBackend, type SqlBackend } from '../adapters/sql/database.js';
import { installEnvelopeErrors } from '../shared/http-envelope.js';
import { systemClock } from '../shared/clock.js';
import { registerOutboxAdminRoutes } from './admin-routes.js';
import { SqlOutboxStore } from './sql-outbox-store.js';
import { insertEvents, rowOf } from './testing/outbox-rows.js';
import { SqlWebhookDirectory } from './webhooks.js';

const TOKEN = 'admin-token-for-tests-0123456789';
const auth = { 'x-admin-token': TOKEN };

interface Envelope<T> {
  code: number;
  message: string;
  data: T;
  reason?: string;
}

void describe('outbox admin API', () => {
  let dir: string;
  let sql: SqlBackend;
  let app: FastifyInstance;
  let store: SqlOutboxStore;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-admin-'));
    sql = await openSqlBackend(join(dir, 'rooms.sqlite'));
    store = new SqlOutboxStore(sql);
    app = Fastify();
    installEnvelopeErrors(app);
    registerOutboxAdminRoutes(app, {
      store,
      webhooks: new SqlWebhookDirectory(sql),
      clock: systemClock,
      adminToken: TOKEN,
    });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await sql.close();
    await rm(dir, { recursive: true, force: true });
  });

  const call = async <T>(
    method: 'GET' | 'PUT' | 'POST' | 'DELETE',
    url: string,
    payload?: object,
    headers: Record<string, string> = auth,
  ) => {
    const res = await app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<Envelope<T>>() };
  };

  void it('refuses requests without the admin token', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { 'x-admin-token': 'wrong' },
      { authorization: `Bearer ${TOKEN}` },
    ];
    for (const headers of attempts) {
      const res = await call('GET', '/api/v1/admin/outbox', undefined, headers);
      assert.equal(res.status, 401);
      assert.equal(res.body.reason, 'BAD_ADMIN_TOKEN');
    }
  });

  void it('sets, shows (without the secret) and deletes an app webhook', async () => {
    const bad = await call('PUT', '/api/v1/admin/apps/demo/webhook', {
      url: 'ftp://x',
      secret: 'short',
    });
    assert.equal(bad.status, 400);
    const put = await call('PUT', '/api/v1/admin/apps/demo/webhook', {
      url: 'https://hooks.example.com/rooms',
      secret: 'a-long-enough-secret',
    });
    assert.equal(put.status, 200);
    const shown = await call<Record<string, unknown>>('GET', '/api/v1/admin/apps/demo/webhook');
    assert.equal(shown.body.data.url, 'https://hooks.example.com/rooms');
    assert.ok(!('secret' in shown.body.data), 'the secret is write-only');
    await call('PUT', '/api/v1/admin/apps/demo/webhook', {
      url: 'https://hooks.example.com/v2',
      secret: 'another-long-secret',
    });
    assert.equal(
      (await new SqlWebhookDirectory(sql).get('demo'))?.secret,
      'another-long-secret',
      'PUT replaces',
    );
    const deleted = await call<{ deleted: boolean }>('DELETE', '/api/v1/admin/apps/demo/webhook');
    assert.equal(deleted.body.data.deleted, true);
    assert.equal((await call('GET', '/api/v1/admin/apps/demo/webhook')).status, 404);
  });

  void it('refuses a webhook URL that is not http(s) with a host, or names an internal address', async () => {
    await call('PUT', '/api/v1/admin/apps/guard/webhook', {
      url: 'https://hooks.example.com/ok',
      secret: 'a-long-enough-secret',
    });
    const refused: [string, RegExp][] = [
      ['ftp://hooks.example.com/', /http\(s\) URL/],
      ['file:///etc/passwd', /http\(s\) URL/],
      ['http://', /http\(s\) URL/],
      ['http://:8080/x', /http\(s\) URL/],
      ['http://127.0.0.1:8080/admin', /destination refused: loopback/],
      ['http://2130706433/', /destination refused: loopback/],
      ['http://[::1]/', /destination refused: loopback/],
      ['http://[::ffff:127.0.0.1]/', /destination refused: loopback/],
      ['http://10.1.2.3/', /destination refused: private/],
      ['http://169.254.169.254/latest/meta-data/', /destination refused: link-local/],
      ['http://[fe80::1]/', /destination refused: link-local/],
    ];
    for (const [url, message] of refused) {
      const res = await call<unknown>('PUT', '/api/v1/admin/apps/guard/webhook', {
        url,
        secret: 'another-long-secret',
      });
      assert.equal(res.status, 400, url);
      assert.match(res.body.message, message, url);
    }
    // Nothing changed.
    const hook = await new SqlWebhookDirectory(sql).get('guard');
    assert.deepEqual(
      [hook?.url, hook?.secret],
      ['https://hooks.example.com/ok', 'a-long-enough-secret'],
    );
  });

  void it('lists skipped events (no webhook) and re-queues them on request only', async () => {
    const [s] = await insertEvents(sql.db, [{ roomId: 'skp', version: 1, appCode: 'quiet' }]);
    const claim = await store.claim({
      workerId: 'w',
      nowMs: Date.now(),
      lockMs: 60_000,
      limit: 10,
      perRoomLimit: 10,
    });
    const mine = claim.events.find((e) => e.eventId === s)!;
    await store.settle(
      [{ claim, settlement: { kind: 'skipped', id: mine.id, reason: 'no webhook configured' } }],
      Date.now(),
    );
    const list = await call<{ events: Record<string, unknown>[] }>(
      'GET',
      '/api/v1/admin/outbox?status=skipped&app_code=quiet',
    );
    assert.deepEqual(
      list.body.data.events.map((e) => [e.event_id, e.status, e.attempts, e.last_error]),
      [[s, 'skipped', 0, 'no webhook configured']],
    );
    const byDefault = await call<{ requeued: number }>('POST', '/api/v1/admin/outbox/requeue', {
      app_code: 'quiet',
    });
    assert.equal(byDefault.body.data.requeued, 0, 'the default re-queues failed events only');
    const bad = await call('POST', '/api/v1/admin/outbox/requeue', {
      app_code: 'quiet',
      status: 'delivered',
    });
    assert.equal(bad.status, 400);
    const requeued = await call<{ requeued: number }>('POST', '/api/v1/admin/outbox/requeue', {
      app_code: 'quiet',
      status: 'skipped',
    });
    assert.equal(requeued.body.data.requeued, 1);
    assert.equal((await rowOf(sql.db, s!)).status, 'pending');
    await sql.db.deleteFrom('room_outbox').execute();
  });

  void it('takes paging query integers as decimal digits only', async () => {
    for (const q of [
      'limit=0x10',
      'limit=1e2',
      'after_id=',
      'after_id=-1',
      'limit=0',
      'limit=501',
    ]) {
      const res = await call('GET', `/api/v1/admin/outbox?${q}`);
      assert.equal(res.status, 400, `${q}: ${JSON.stringify(res.body)}`);
    }
    assert.equal((await call('GET', '/api/v1/admin/outbox?limit=5&after_id=0')).status, 200);
  });

  void it('lists failed events, re-queues them, and lets an operator give up on one', async () => {
    const [x, y] = await insertEvents(sql.db, [
      { roomId: 'adm', version: 1, appCode: 'demo' },
      { roomId: 'adm', version: 2, appCode: 'demo' },
    ]);
    const claim = await store.claim({
      workerId: 'w',
      nowMs: Date.now(),
      lockMs: 60_000,
      limit: 10,
      perRoomLimit: 10,
    });
    await store.settle(
      [{ claim, settlement: { kind: 'failed', id: claim.events[0]!.id, error: 'HTTP 400' } }],
      Date.now(),
    );
    const list = await call<{ events: Record<string, unknown>[]; next_after_id: number | null }>(
      'GET',
      '/api/v1/admin/outbox?status=failed&app_code=demo',
    );
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.data.events.map((e) => [e.event_id, e.status, e.attempts, e.last_error]),
      [[x, 'failed', 1, 'HTTP 400']],
    );
    assert.equal((list.body.data.events[0]!.envelope as { room_version: number }).room_version, 1);
    assert.equal(list.body.data.next_after_id, null);

    assert.equal((await call('POST', '/api/v1/admin/outbox/requeue', {})).status, 400);
    const requeued = await call<{ requeued: number }>('POST', '/api/v1/admin/outbox/requeue', {
      event_ids: [x],
    });
    assert.equal(requeued.body.data.requeued, 1);
    assert.deepEqual(
      [(await rowOf(sql.db, x!)).status, Number((await rowOf(sql.db, x!)).attempts)],
      ['pending', 0],
    );

    // y is still delivering (claimed above): an operator cannot fail it; x (pending) can.
    const refused = await call('POST', `/api/v1/admin/outbox/events/${y}/fail`, {});
    assert.equal(refused.status, 400);
    const failed = await call('POST', `/api/v1/admin/outbox/events/${x}/fail`, { reason: 'bad' });
    assert.equal(failed.status, 200);
    assert.deepEqual(
      [(await rowOf(sql.db, x!)).status, (await rowOf(sql.db, x!)).last_error],
      ['failed', 'bad'],
    );
  });
});
