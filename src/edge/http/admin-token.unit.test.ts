/**
 * The four operator route sets share one `X-Admin-Token` check, run before the body is read:
 * without the right token every route answers 401 BAD_ADMIN_TOKEN, even to a body that does
 * not parse, and nothing behind it is reached. (admin-token.int.test.ts sends raw bytes.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerOutboxAdminRoutes } from '../../outbox/admin-routes.js';
import { systemClock } from '../../shared/clock.js';
import { installEnvelopeErrors } from '../../shared/http-envelope.js';
import { registerAdminInspectionRoutes } from './admin-inspection-routes.js';
import { registerAdminRoutes } from './admin-routes.js';
import { registerNodeAdminRoutes } from './node-admin-routes.js';

const TOKEN = 'admin-token-for-tests-0123456789';

void describe('requireAdminToken, in front of every admin route set', () => {
  const reached: string[] = [];
  /** Whatever a route calls behind the check is recorded, and fails. */
  const behind = (name: string) =>
    new Proxy({} as never, {
      get: (_target, key) =>
        key === 'then'
          ? undefined
          : () => {
              reached.push(`${name}.${String(key)}`);
              throw new Error('reached');
            },
    });
  let app: FastifyInstance;

  before(async () => {
    app = Fastify();
    installEnvelopeErrors(app);
    const adminToken = TOKEN;
    registerAdminRoutes(app, { store: behind('wallets'), adminToken, clock: systemClock });
    registerOutboxAdminRoutes(app, {
      store: behind('outbox'),
      webhooks: behind('webhooks'),
      clock: systemClock,
      adminToken,
    });
    registerAdminInspectionRoutes(app, { cells: behind('cells'), log: behind('log'), adminToken });
    registerNodeAdminRoutes(app, { node: behind('node'), adminToken });
    await app.ready();
  });
  after(() => app.close());

  const routes = [
    ['POST', '/api/v1/admin/wallets/topup'],
    ['PUT', '/api/v1/admin/gifts/rose'],
    ['PUT', '/api/v1/admin/apps/demo/webhook'],
    ['POST', '/api/v1/admin/outbox/requeue'],
    ['GET', '/api/v1/admin/cells'],
    ['GET', '/api/v1/admin/rooms/r-1/log?app_code=demo'],
    ['POST', '/api/v1/admin/node/drain'],
    ['POST', '/api/v1/admin/node/undrain'],
  ] as const;

  for (const [method, url] of routes) {
    void it(`${method} ${url}: 401 without the token, even to a body that does not parse`, async () => {
      const bodies = method === 'GET' ? [undefined] : [undefined, '{}', '{"no json'];
      for (const token of [undefined, '', `${TOKEN}0`, TOKEN.toUpperCase()]) {
        for (const payload of bodies) {
          const res = await app.inject({
            method,
            url,
            headers: {
              ...(token === undefined ? {} : { 'x-admin-token': token }),
              ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
            },
            ...(payload === undefined ? {} : { payload }),
          });
          assert.equal(res.statusCode, 401, `${String(token)} ${String(payload)}: ${res.body}`);
          const body = res.json<{ code: number; message: string; reason: string }>();
          assert.deepEqual(
            [body.code, body.message, body.reason],
            [401, 'admin token required', 'BAD_ADMIN_TOKEN'],
          );
        }
      }
      assert.deepEqual(reached, []);
    });
  }

  void it('the right token passes the check (a body that does not parse is then a 400)', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/admin/node/drain',
      headers: { 'x-admin-token': TOKEN, 'content-type': 'application/json' },
      payload: '{"no json',
    });
    assert.equal(res.statusCode, 400, res.body);
    await app.inject({
      method: 'GET',
      url: '/api/v1/admin/cells',
      headers: { 'x-admin-token': TOKEN },
    });
    assert.deepEqual(reached, ['cells.loadedCells']);
  });
});
