/** The admin inspection API on embedded SQLite (the harness's own database file). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startTestHttpApp } from '../../main/testing/http-app-harness.js';
import { ADMIN_TOKEN, adminInspectionContract } from './admin-inspection.contract.js';

adminInspectionContract('SQLite', () =>
  Promise.resolve({ env: {}, close: () => Promise.resolve() }),
);

it('refuses every inspection call when no admin token is configured', async () => {
  const app = await startTestHttpApp();
  try {
    for (const url of ['/api/v1/admin/cells', '/api/v1/admin/rooms/any/log']) {
      for (const headers of [{}, { 'x-admin-token': '' }, { 'x-admin-token': ADMIN_TOKEN }]) {
        const res = await app.http.inject({ url, headers });
        assert.equal(res.statusCode, 401, `${url} ${JSON.stringify(headers)}`);
      }
    }
  } finally {
    await app.close();
  }
});
