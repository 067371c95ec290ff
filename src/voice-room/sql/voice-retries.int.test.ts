/**
 * The outside testers' retry scenarios on the voice room: after the owner is drained or
 * killed, every retried request id gets its first answer on the new owner, whatever the
 * room's state is now, and creates no version.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { CellHost } from '../../cell/host.js';
import {
  eventually,
  mariadbRedisBackend,
  sqliteMemoryBackend,
  startHost,
  type TestBackend,
  type TestHost,
} from '../../cell/testing/harness.js';
import type { VoiceRoomCommand } from '../domain/types.js';
import { clusterSkipReason } from '../../testing/backends.js';
import { voiceRoomWithSql } from './index.js';

const voice = voiceRoomWithSql({
  presenceTimeoutMs: 60_000,
  publishTimeoutMs: 60_000,
  maxSeats: 8,
});

function suite(name: string, open: () => Promise<TestBackend>, skip: string | false) {
  describe(`voice-room retries after an owner change (${name})`, { skip }, () => {
    let backend: TestBackend;
    const hosts: TestHost[] = [];
    const host = async () => {
      const h = await startHost(backend, { domains: [voice] });
      hosts.push(h);
      return h;
    };
    before(async () => {
      backend = await open();
    });
    afterEach(async () => {
      for (const h of hosts.splice(0)) await h.kill();
    });
    after(async () => {
      await backend?.close();
    });

    /** Runs on `h`, waiting while the room still belongs to a dead owner. */
    const run = (h: CellHost, roomId: string, command: VoiceRoomCommand, requestId: string) =>
      eventually(async () => {
        const routed = await h
          .execute(voice, { appCode: 'default', roomId }, command, { requestId })
          .catch((e: unknown) => {
            if ((e as { kind?: string }).kind === 'unavailable') return undefined;
            throw e;
          });
        return routed?.kind === 'local' ? { ok: routed.value } : undefined;
      }).then((r) => r.ok);
    const settled = (p: Promise<unknown>) =>
      p.then(
        (value) => ({ value }),
        (error: unknown) => ({ error: (error as { code?: string }).code }),
      );

    for (const handover of ['drain', 'kill'] as const) {
      it(`every retry answers its first outcome after a ${handover} of the owner`, async () => {
        const roomId = `retry-${handover}-${Date.now().toString(36)}`;
        const a = await host();
        const commands: [string, VoiceRoomCommand][] = [
          ['c1', { type: 'CreateRoom', owner_user_id: 'own', title: 'Retry', seat_count: 4 }],
          ['j-own', { type: 'JoinRoom', user_id: 'own' }],
          ['j-bob', { type: 'JoinRoom', user_id: 'bob' }],
          ['j-eve', { type: 'JoinRoom', user_id: 'eve' }],
          [
            'adm',
            { type: 'SetRoomAdmin', user_id: 'bob', is_admin: true, operator_user_id: 'own' },
          ],
          ['up-bob', { type: 'MicUp', user_id: 'bob', seat_index: 1 }],
          [
            'lock',
            { type: 'SetMicSeatLock', seat_index: 3, locked: true, operator_user_id: 'own' },
          ],
          ['up-eve', { type: 'MicUp', user_id: 'eve', seat_index: 1 }], // refused: occupied
          ['down-bob', { type: 'MicDown', user_id: 'bob' }],
          ['kick-eve', { type: 'KickUser', user_id: 'eve', operator_user_id: 'own' }],
        ];
        const first = new Map<string, unknown>();
        for (const [id, command] of commands) {
          first.set(id, await settled(run(a.host, roomId, command, id)));
        }
        assert.deepEqual(first.get('up-eve'), { error: 'SEAT_OCCUPIED' });
        // The state moves on, so deciding any of them again would answer differently.
        const later: [string, VoiceRoomCommand][] = [
          ['up-own', { type: 'MicUp', user_id: 'own', seat_index: 1 }],
          [
            'unlock',
            { type: 'SetMicSeatLock', seat_index: 3, locked: false, operator_user_id: 'own' },
          ],
          [
            'unadm',
            { type: 'SetRoomAdmin', user_id: 'bob', is_admin: false, operator_user_id: 'own' },
          ],
        ];
        for (const [id, command] of later) await run(a.host, roomId, command, id);
        const version = a.host.loaded({ appCode: 'default', roomId })!.currentVersion;
        if (handover === 'drain') await a.drain();
        else await a.kill();
        const b = await host();
        for (const [id, command] of commands) {
          const again = await settled(run(b.host, roomId, command, id));
          const expected = first.get(id) as { value?: object; error?: string };
          assert.deepEqual(
            again,
            expected.value ? { value: { ...expected.value, duplicate: true } } : expected,
            `retry of ${id}`,
          );
        }
        assert.equal(b.host.loaded({ appCode: 'default', roomId })!.currentVersion, version);
      });
    }
  });
}

suite('SQLite + in-memory', sqliteMemoryBackend, false);
suite('MariaDB + Redis', () => mariadbRedisBackend(), await clusterSkipReason());
