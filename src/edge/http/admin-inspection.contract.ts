/**
 * The admin inspection API on a node's HTTP app, as an operator calls it: the token is
 * required and checked, the loaded cells show owner, version, epoch and batch stats, a room's
 * command log pages from SQL with no secret in it (a meeting's password hash redacted), and
 * query integers are decimal digits within their bounds. Runs on SQLite and MariaDB.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';
import { meetingClient, type Envelope } from '../../meeting/api/testing/meeting-client.js';

export const ADMIN_TOKEN = 'admin-token-for-inspection-tests-0123';

interface CellBody {
  app_code: string;
  room_id: string;
  kind: string;
  owner_node_id: string;
  version: number;
  snapshot_version: number;
  lease_epoch: number;
  persisted: boolean;
  queued: number;
  loaded_at_ms: number;
  last_activity_ms: number;
  batches: number;
  commands: number;
  refused: number;
  last_commit_at_ms: number | null;
}
interface LogEntry {
  version: number;
  request_id: string;
  command_type: string;
  event_types: string[];
  command: Record<string, unknown>;
  events: Record<string, unknown>[];
  owner_node_id: string;
  lease_epoch: number;
  created_at_ms: number;
}

export function adminInspectionContract(
  name: string,
  /** `ROOMS_*` variables naming the database, and what drops it afterwards. */
  database: () => Promise<{ env: Record<string, string>; close(): Promise<void> }>,
  options: { skip?: string | false } = {},
): void {
  describe(`admin inspection API (${name})`, { skip: options.skip ?? false }, () => {
    let app: TestHttpApp;
    let dropDatabase: () => Promise<void> = () => Promise.resolve();
    const c = meetingClient(() => app.http);
    const admin = async <T = unknown>(url: string, token: string | null = ADMIN_TOKEN) => {
      const res = await app.http.inject({
        url,
        headers: token === null ? {} : { 'x-admin-token': token },
      });
      return { status: res.statusCode, body: res.json<Envelope>(), raw: res.body, data: null as T };
    };
    const ok = async <T>(url: string): Promise<T> => {
      const res = await admin(url);
      assert.equal(res.status, 200, `${url}: ${res.raw}`);
      return res.body.data as T;
    };
    const post = async (as: string, url: string, body: object = {}) => {
      const res = await c.call('POST', url, { as, body });
      assert.ok(res.status < 300, `${url}: ${JSON.stringify(res.body)}`);
      return res.body.data as Record<string, unknown>;
    };

    let voiceRoom: string;
    let meetingCode: string;

    before(async () => {
      const db = await database();
      dropDatabase = () => db.close();
      app = await startTestHttpApp({ ...db.env, ROOMS_ADMIN_TOKEN: ADMIN_TOKEN });
      await c.users(['olga', 'piet']);
      voiceRoom = (await post('olga', '/voice/rooms', { title: 'Inspect me' })).room_id as string;
      await post('olga', `/voice/rooms/${voiceRoom}/join`);
      await post('piet', `/voice/rooms/${voiceRoom}/join`);
      await post('olga', `/voice/rooms/${voiceRoom}/mic/up`, { seat_index: 0 });
      await post('piet', `/voice/rooms/${voiceRoom}/leave`);
      const meeting = await post('olga', '/meeting/rooms', {
        title: 'Secret meeting',
        password: 'hunter22',
      });
      meetingCode = (meeting.room as { room_code: string }).room_code;
    });
    after(async () => {
      await app?.close();
      await dropDatabase();
    });

    it('refuses every inspection call without the admin token, or with a wrong one', async () => {
      const urls = ['/api/v1/admin/cells', `/api/v1/admin/rooms/${voiceRoom}/log`];
      for (const url of urls) {
        for (const token of [null, '', 'wrong', `${ADMIN_TOKEN}x`, ADMIN_TOKEN.slice(0, -1)]) {
          const res = await admin(url, token);
          assert.equal(res.status, 401, `${url} with ${String(token)}`);
          assert.equal(res.body.reason, 'BAD_ADMIN_TOKEN');
        }
        const bearer = await app.http.inject({
          url,
          headers: { authorization: `Bearer ${c.tokens.olga}` },
        });
        assert.equal(bearer.statusCode, 401, 'a user token is not the admin token');
      }
    });

    it('lists the loaded cells with owner, version, epoch and what each committed', async () => {
      const data = await ok<{
        node_id: string;
        total: number;
        counts: Record<string, number>;
        cells: CellBody[];
        next_after: string | null;
      }>('/api/v1/admin/cells');
      assert.equal(data.node_id, 'http-test');
      assert.ok(data.counts.voice_room! >= 1 && data.counts.meeting! >= 1, JSON.stringify(data));
      const voice = data.cells.find((cell) => cell.room_id === voiceRoom)!;
      assert.ok(voice, 'the voice room is loaded');
      const log = await ok<{ version: number; lease_epoch: number }>(
        `/api/v1/admin/rooms/${voiceRoom}/log`,
      );
      assert.deepEqual(
        [voice.app_code, voice.kind, voice.owner_node_id, voice.persisted, voice.queued],
        ['default', 'voice_room', 'http-test', true, 0],
      );
      // Created, two joins, a mic, a leave: five versions, all committed since it was loaded.
      assert.equal(voice.version, 5);
      assert.equal(voice.version, log.version);
      assert.equal(voice.lease_epoch, log.lease_epoch);
      assert.ok(voice.lease_epoch >= 1);
      assert.equal(voice.commands, 5);
      assert.ok(voice.batches >= 1 && voice.batches <= 5, `batches ${voice.batches}`);
      assert.equal(typeof voice.last_commit_at_ms, 'number');
      assert.ok(voice.last_commit_at_ms! >= voice.loaded_at_ms);
      const meeting = data.cells.find((cell) => cell.room_id === meetingCode)!;
      assert.equal(meeting.kind, 'meeting');
      assert.ok(meeting.commands >= 1);

      const byKind = await ok<{ cells: CellBody[] }>('/api/v1/admin/cells?kind=meeting');
      assert.ok(byKind.cells.length >= 1);
      assert.ok(byKind.cells.every((cell) => cell.kind === 'meeting'));
      const otherApp = await ok<{ cells: CellBody[] }>('/api/v1/admin/cells?app_code=nobody');
      assert.deepEqual(otherApp.cells, []);

      // Paged one by one, in order, every cell once.
      const seen: string[] = [];
      let after: string | null = null;
      do {
        const page: { cells: CellBody[]; next_after: string | null } = await ok(
          `/api/v1/admin/cells?limit=1${after ? `&after=${encodeURIComponent(after)}` : ''}`,
        );
        assert.ok(page.cells.length <= 1);
        seen.push(...page.cells.map((cell) => `${cell.app_code}/${cell.room_id}`));
        after = page.next_after;
      } while (after !== null);
      assert.deepEqual(seen, [...seen].sort());
      assert.equal(seen.length, data.total);
    });

    it("pages a room's command log from SQL: versions in order, types, request ids, events", async () => {
      type Page = {
        kind: string;
        version: number;
        owner_node_id: string;
        entries: LogEntry[];
        next_after_version: number | null;
      };
      const all = await ok<Page>(`/api/v1/admin/rooms/${voiceRoom}/log`);
      assert.equal(all.kind, 'voice_room');
      assert.equal(all.owner_node_id, 'http-test');
      assert.deepEqual(
        all.entries.map((e) => e.version),
        [1, 2, 3, 4, 5],
      );
      assert.deepEqual(
        all.entries.map((e) => e.command_type),
        ['CreateRoom', 'JoinRoom', 'JoinRoom', 'MicUp', 'LeaveRoom'],
      );
      assert.ok(all.entries[3]!.event_types.includes('MicTakenUp'), JSON.stringify(all.entries[3]));
      for (const e of all.entries) {
        assert.equal(typeof e.request_id, 'string');
        assert.ok(e.request_id.length > 0);
        assert.ok(Array.isArray(e.events) && e.events.length === e.event_types.length);
        assert.equal(e.owner_node_id, 'http-test');
        assert.ok(Number.isInteger(e.created_at_ms) && e.created_at_ms > 0);
        assert.ok(!('lease_token' in e), 'lease tokens are not shown');
      }
      assert.equal(all.next_after_version, null);

      const first = await ok<Page>(`/api/v1/admin/rooms/${voiceRoom}/log?limit=2`);
      assert.deepEqual(
        [first.entries.map((e) => e.version), first.next_after_version],
        [[1, 2], 2],
      );
      const rest = await ok<Page>(
        `/api/v1/admin/rooms/${voiceRoom}/log?after_version=2&limit=3&app_code=default`,
      );
      assert.deepEqual(
        [rest.entries.map((e) => e.version), rest.next_after_version],
        [[3, 4, 5], null],
      );
      const past = await ok<Page>(`/api/v1/admin/rooms/${voiceRoom}/log?after_version=5`);
      assert.deepEqual(past.entries, []);
    });

    it("shows a meeting's CreateMeeting without its password hash, anywhere", async () => {
      // The log really holds the hash: the redaction is what keeps it out.
      const stored = await app.sql.db
        .selectFrom('room_command_log')
        .select(['payload', 'events'])
        .where('room_id', '=', meetingCode)
        .where('version', '=', 1)
        .executeTakeFirstOrThrow();
      assert.match(stored.payload, /\$2[aby]?\$/, 'the command log stores the bcrypt hash');

      const res = await admin(`/api/v1/admin/rooms/${meetingCode}/log`);
      assert.equal(res.status, 200, res.raw);
      assert.doesNotMatch(res.raw, /\$2[aby]?\$/, 'no bcrypt hash in the answer');
      assert.ok(!res.raw.includes('hunter22'));
      const entries = (res.body.data as { entries: LogEntry[] }).entries;
      const create = entries[0]!;
      assert.equal(create.command_type, 'CreateMeeting');
      assert.equal(create.command.password_hash, '[redacted]');
      assert.equal(create.command.title, 'Secret meeting', 'the rest is shown');
      const created = create.events.find((e) => e.type === 'MeetingCreated')!;
      assert.deepEqual([created.password_hash, created.has_password], ['[redacted]', true]);
    });

    it('answers 404 for a room without a row, and 400 for bad ids', async () => {
      const missing = await admin('/api/v1/admin/rooms/no-such-room/log');
      assert.deepEqual([missing.status, missing.body.reason], [404, 'CELL_NOT_FOUND']);
      const otherApp = await admin(`/api/v1/admin/rooms/${voiceRoom}/log?app_code=other`);
      assert.equal(otherApp.status, 404, 'a room is found in its own app only');
      for (const q of ['app_code=Bad!', 'app_code=', `app_code=${'a'.repeat(65)}`]) {
        const res = await admin(`/api/v1/admin/rooms/${voiceRoom}/log?${q}`);
        assert.equal(res.status, 400, q);
      }
      const long = await admin(`/api/v1/admin/rooms/${'r'.repeat(129)}/log`);
      assert.equal(long.status, 400);
    });

    it('takes query integers as decimal digits within bounds only (more is refused, not clamped)', async () => {
      const log = `/api/v1/admin/rooms/${voiceRoom}/log`;
      const refused = [
        `${log}?limit=501`,
        `${log}?limit=0`,
        `${log}?limit=1e2`,
        `${log}?limit=0x10`,
        `${log}?limit=`,
        `${log}?limit=%201`,
        `${log}?limit=2.0`,
        `${log}?after_version=-1`,
        `${log}?after_version=1e2`,
        `${log}?after_version=`,
        `${log}?after_version=${'9'.repeat(16)}`,
        `${log}?limit=1&limit=2`,
        '/api/v1/admin/cells?limit=1001',
        '/api/v1/admin/cells?limit=0',
        '/api/v1/admin/cells?limit=1e2',
        '/api/v1/admin/cells?kind=Bad!',
      ];
      for (const url of refused) {
        const res = await admin(url);
        assert.equal(res.status, 400, `${url}: ${res.raw}`);
      }
      const max = await ok<{ entries: LogEntry[] }>(`${log}?limit=500&after_version=0`);
      assert.equal(max.entries.length, 5);
      const cells = await ok<{ cells: CellBody[] }>('/api/v1/admin/cells?limit=1000');
      assert.ok(cells.cells.length >= 2);
    });
  });
}
