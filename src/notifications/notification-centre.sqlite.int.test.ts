/** The notification centre's contract on the embedded backend: SQLite, in-process bus. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { notificationCentreContract } from './notification-centre.contract.js';

notificationCentreContract('SQLite + in-memory', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rooms-notify-'));
  return {
    env: {
      ROOMS_DB_URL: join(dir, 'rooms.sqlite'),
      ROOMS_JWT_SECRET: 'sqlite-notification-secret-0123456789abcdef',
    },
    nodes: 1,
    close: () => rm(dir, { recursive: true, force: true }),
  };
});
