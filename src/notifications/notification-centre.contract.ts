/**
 * The notification centre's contract, through whole nodes (`startNode`): `pushBatch` as the
 * meeting invite calls it, the four REST endpoints as a client calls them, and the live
 * `notification.new` frame on real WebSockets. Runs on SQLite + in-memory (one node) and on
 * MariaDB + Redis (two nodes: pushed on one, read and received on the other).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import WebSocket from 'ws';
import { eventually } from '../cell/testing/harness.js';
import { startTestNode } from '../edge/http/auth-routes.contract.js';
import type { RoomsNode } from '../main/node.js';
import type { NotificationInput, NotificationJson } from './notification-centre.js';

export interface NotificationTestBackend {
  /** `ROOMS_*` variables naming the database, the secret and (cluster) Redis. */
  readonly env: Readonly<Record<string, string>>;
  /** Nodes to start on it: 1 (embedded) or 2 (cluster). */
  readonly nodes: number;
  close(): Promise<void>;
}

interface User {
  readonly id: string;
  readonly token: string;
}

interface Frame {
  event: string;
  data: NotificationJson;
  code: number;
}

interface Page {
  list: NotificationJson[];
  has_more: boolean;
}

type Answer = { code: number; data: unknown; reason?: string };

const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
let userSeq = 0;

export function notificationCentreContract(
  name: string,
  open: () => Promise<NotificationTestBackend>,
  options: { skip?: string | false } = {},
): void {
  describe(`notification centre (${name})`, { skip: options.skip ?? false }, () => {
    let backend: NotificationTestBackend;
    const nodes: RoomsNode[] = [];
    /** Where the meeting invite runs (pushBatch). */
    let sender: RoomsNode;
    /** Where the recipients call the REST API and hold their sockets (the other node). */
    let reader: RoomsNode;

    before(async () => {
      backend = await open();
      for (let i = 0; i < backend.nodes; i++) nodes.push(await startTestNode(backend.env));
      sender = nodes[0]!;
      reader = nodes[nodes.length - 1]!;
    });
    after(async () => {
      for (const node of nodes) await node.close();
      await backend?.close();
    });

    const call = async (
      method: 'GET' | 'POST',
      url: string,
      token?: string,
      node: RoomsNode = reader,
    ) => {
      const res = await node.http.inject({
        method,
        url,
        ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
      });
      return {
        status: res.statusCode,
        body: res.json<Answer>(),
      };
    };
    const ok = async <T = unknown>(method: 'GET' | 'POST', url: string, user: User) => {
      const res = await call(method, url, user.token);
      assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, 0);
      return res.body.data as T;
    };
    const list = (user: User, query = '') => ok<Page>('GET', `/api/v1/notifications${query}`, user);
    const unread = async (user: User) =>
      (await ok<{ count: number }>('GET', '/api/v1/notifications/unread-count', user)).count;
    const markRead = (id: number, user: User) =>
      ok<NotificationJson>('POST', `/api/v1/notifications/${id}/read`, user);

    /** A fresh user of `app`, registered and logged in over REST. */
    const newUser = async (app = 'default'): Promise<User> => {
      const username = `n${++userSeq}-${process.pid}`;
      const headers = { 'x-app-code': app };
      const payload = { username, password: 'secret123' };
      const registered = await reader.http.inject({
        method: 'POST',
        url: '/api/v1/auth/register',
        headers,
        payload,
      });
      assert.equal(registered.statusCode, 201, registered.body);
      const login = await reader.http.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        headers,
        payload,
      });
      const data = login.json<{ data: { access_token: string; user: { id: number } } }>().data;
      return { id: String(data.user.id), token: data.access_token };
    };

    const invite = (n: number): NotificationInput => ({
      type: 'meeting_invite',
      title: `会议邀请 ${n}`,
      content: 'Alice 邀请你加入会议',
      extra: {
        room_code: '835-000-036',
        room_title: 'Weekly sync',
        has_password: false,
        invite_token: '0123456789abcdef0123456789abcdef',
        inviter_id: 16,
        inviter_name: 'Alice',
        inviter_avatar: '',
        expired_at: 1_776_000_000 + n,
        nested: { list: [1, 'two', null], emoji: '🎉' },
      },
    });
    const push = (recipients: readonly User[] | readonly string[], n = 1, app = 'default') =>
      sender.notifications.pushBatch(
        app,
        recipients.map((r) => (typeof r === 'string' ? r : r.id)),
        invite(n),
      );
    const rowsOf = (app: string, userId: string) =>
      reader.sql.db
        .selectFrom('notifications')
        .selectAll()
        .where('app_code', '=', app)
        .where('user_id', '=', userId)
        .orderBy('id')
        .execute();
    const rowCount = async () =>
      Number(
        (
          await reader.sql.db
            .selectFrom('notifications')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    /** Every socket a test opened; each test closes its own. */
    const sockets: WebSocket[] = [];
    const connect = async (node: RoomsNode, user: User) => {
      const url = node.httpAddress.replace(/^http/, 'ws');
      const socket = new WebSocket(`${url}/ws?token=${user.token}`);
      sockets.push(socket);
      const frames: Frame[] = [];
      socket.on('message', (raw: Buffer) => frames.push(JSON.parse(raw.toString('utf8')) as Frame));
      await once(socket, 'open');
      // Readiness, not the subject: the node's subscription to the user's channel is
      // asynchronous, so wait until a plain targeted frame gets through.
      await eventually(() => {
        node.delivery.publisher.toUser('default', user.id, 'probe', {});
        return frames.some((f) => f.event === 'probe');
      });
      const news = () => frames.filter((f) => f.event === 'notification.new');
      return { frames, news };
    };

    it('pushBatch writes one row per recipient (duplicates once) with the exact extra, listed as sent', async () => {
      const [a, b, c] = [await newUser(), await newUser(), await newUser()];
      const pushed = await push([a, b, a, c]);
      assert.deepEqual(
        pushed.map((p) => p.userId),
        [a.id, b.id, c.id],
      );
      for (const user of [a, b, c]) {
        const rows = await rowsOf('default', user.id);
        assert.equal(rows.length, 1, `one row for ${user.id}`);
        assert.deepEqual(JSON.parse(rows[0]!.extra), invite(1).extra);
        assert.deepEqual(
          [rows[0]!.type, rows[0]!.title, rows[0]!.content, Number(rows[0]!.is_read)],
          ['meeting_invite', '会议邀请 1', 'Alice 邀请你加入会议', 0],
        );
        const page = await list(user);
        assert.equal(page.has_more, false);
        assert.equal(page.list.length, 1);
        const shown = page.list[0]!;
        assert.equal(typeof shown.id, 'number');
        assert.equal(shown.id, Number(rows[0]!.id));
        assert.deepEqual(shown, pushed.find((p) => p.userId === user.id)!.notification);
        assert.deepEqual(shown.extra, invite(1).extra);
        assert.equal(shown.is_read, false);
        assert.equal(shown.read_at, null);
        assert.match(shown.created_at, TIME);
      }
      assert.equal(new Set(pushed.map((p) => p.notification.id)).size, 3, 'distinct ids');
      assert.deepEqual(await push([]), [], 'an empty batch writes nothing');
    });

    it('pushBatch takes 50 recipients and refuses 51 or bad input, writing nothing', async () => {
      const fifty = Array.from({ length: 50 }, (_, i) => String(9_000_000 + i));
      assert.equal((await push(fifty)).length, 50);
      const before = await rowCount();
      const refusals: [string, Promise<unknown>][] = [
        ['TOO_MANY_RECIPIENTS', push([...fifty, '9000050'])],
        ['INVALID_ARGUMENT', push(['12', '0x10'])],
        ['INVALID_ARGUMENT', push(['12', '-1'])],
        [
          'INVALID_ARGUMENT',
          sender.notifications.pushBatch('default', [12 as unknown as string], invite(1)),
        ],
        ['INVALID_ARGUMENT', push(['12'], 1, 'Bad App')],
        ...(
          [
            { type: 'Meeting Invite' },
            { title: '' },
            { title: '   ' },
            { title: 'a\u0000b' },
            { title: 'x'.repeat(101) },
            { content: 1 },
            { content: 'x'.repeat(1_001) },
            { extra: [] },
            { extra: null },
            { extra: new Date() },
            { extra: { big: 'x'.repeat(5_000) } },
          ] as Partial<Record<keyof NotificationInput, unknown>>[]
        ).map(
          (bad) =>
            [
              'INVALID_ARGUMENT',
              sender.notifications.pushBatch('default', ['12'], {
                ...invite(1),
                ...bad,
              } as NotificationInput),
            ] as [string, Promise<unknown>],
        ),
      ];
      for (const [code, attempt] of refusals) {
        await assert.rejects(attempt, (e: { code?: string; kind?: string }) => {
          assert.equal(e.code, code);
          assert.equal(e.kind, 'validation');
          return true;
        });
      }
      assert.equal(await rowCount(), before, 'a refused batch writes no row');
    });

    it('pushBatch is all or none: a row failing in the database leaves no row and sends no frame', async () => {
      const [kept, failing] = [await newUser(), await newUser()];
      const socket = await connect(reader, kept);
      const db = sender.sql.db;
      // A real database failure on the second row of the batch (a trigger), not a stub.
      await sql
        .raw(
          sender.sql.flavor === 'sqlite'
            ? `CREATE TRIGGER notifications_fail BEFORE INSERT ON notifications
               WHEN NEW.user_id = '${failing.id}' BEGIN SELECT RAISE(ABORT, 'injected'); END`
            : `CREATE TRIGGER notifications_fail BEFORE INSERT ON notifications FOR EACH ROW
               BEGIN IF NEW.user_id = '${failing.id}' THEN
               SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected'; END IF; END`,
        )
        .execute(db);
      try {
        await assert.rejects(push([kept, failing]), /injected/);
      } finally {
        await sql.raw('DROP TRIGGER notifications_fail').execute(db);
      }
      assert.deepEqual(await rowsOf('default', kept.id), [], 'the first row was rolled back');
      assert.deepEqual((await list(kept)).list, []);
      // A marker after the failure: once it arrives, a frame of the failed batch would have.
      try {
        const [marker] = await push([kept], 2);
        await eventually(() => socket.news().length > 0);
        assert.deepEqual(
          socket.news().map((f) => f.data.id),
          [marker!.notification.id],
        );
      } finally {
        for (const s of sockets.splice(0)) s.close();
      }
    });

    it('pushEach gives each recipient its own notification, in one transaction, refusing repeats', async () => {
      const [a, b] = [await newUser(), await newUser()];
      const pushed = await sender.notifications.pushEach('default', [
        { recipient: a.id, notification: invite(1) },
        { recipient: b.id, notification: invite(2) },
      ]);
      assert.deepEqual(
        pushed.map((p) => p.userId),
        [a.id, b.id],
      );
      assert.deepEqual(
        (await list(a)).list.map((n) => [n.title, n.extra]),
        [['会议邀请 1', invite(1).extra]],
      );
      assert.deepEqual(
        (await list(b)).list.map((n) => [n.title, n.extra]),
        [['会议邀请 2', invite(2).extra]],
      );
      const before = await rowCount();
      const bad: [string, Promise<unknown>][] = [
        [
          'INVALID_ARGUMENT',
          sender.notifications.pushEach('default', [
            { recipient: a.id, notification: invite(3) },
            { recipient: a.id, notification: invite(4) },
          ]),
        ],
        [
          'INVALID_ARGUMENT',
          sender.notifications.pushEach('default', [
            { recipient: a.id, notification: invite(3) },
            { recipient: b.id, notification: { ...invite(4), title: '' } },
          ]),
        ],
        [
          'TOO_MANY_RECIPIENTS',
          sender.notifications.pushEach(
            'default',
            Array.from({ length: 51 }, (_, i) => ({
              recipient: String(9_100_000 + i),
              notification: invite(i),
            })),
          ),
        ],
      ];
      for (const [code, attempt] of bad) {
        await assert.rejects(attempt, (e: { code?: string }) => e.code === code);
      }
      assert.equal(await rowCount(), before, 'a refused batch writes no row');
    });

    it('pushEachOnce writes one request once: a retry on any node writes and pushes nothing and gets the first', async () => {
      const [a, b] = [await newUser(), await newUser()];
      const socket = await connect(reader, a);
      try {
        const key = `meeting_invite:835-000-036:${a.id}:once-${userSeq}`;
        const items = (n: number) => [
          { recipient: a.id, notification: invite(n) },
          { recipient: b.id, notification: invite(n + 1) },
        ];
        const first = await sender.notifications.pushEachOnce('default', key, items(1));
        assert.equal(first.fresh, true);
        assert.deepEqual(
          first.notifications.map((p) => p.userId),
          [a.id, b.id],
        );
        // A retry (on the other node where there is one) with new contents, as a retried
        // invite has new tokens: nothing is written, the first notifications answer.
        const again = await reader.notifications.pushEachOnce('default', key, items(3));
        assert.deepEqual(again, { fresh: false, notifications: first.notifications });
        assert.deepEqual(await reader.notifications.sentUnder('default', key), first.notifications);
        for (const [user, n] of [
          [a, 1],
          [b, 2],
        ] as const) {
          const rows = await rowsOf('default', user.id);
          assert.equal(rows.length, 1);
          assert.deepEqual(JSON.parse(rows[0]!.extra), invite(n).extra);
          assert.equal(rows[0]!.request_key, key);
        }
        // A marker after the retry: once it arrives, a second frame would have.
        const [marker] = await push([a], 9);
        await eventually(() => socket.news().some((f) => f.data.id === marker!.notification.id));
        assert.deepEqual(
          socket.news().map((f) => f.data.id),
          [first.notifications[0]!.notification.id, marker!.notification.id],
        );
        // The same key in another app, and another key, are other requests.
        const elsewhere = await sender.notifications.pushEachOnce('other_app', key, items(5));
        assert.equal(elsewhere.fresh, true);
        const next = await sender.notifications.pushEachOnce('default', `${key}-2`, items(7));
        assert.equal(next.fresh, true);
        assert.equal((await rowsOf('default', a.id)).length, 3);
        assert.deepEqual(await sender.notifications.sentUnder('default', `${key}-3`), []);
        // Keys are byte for byte: another case is another request.
        const upper = await sender.notifications.pushEachOnce(
          'default',
          key.toUpperCase(),
          items(9),
        );
        assert.equal(upper.fresh, true);
        const before = await rowCount();
        for (const bad of ['', 'a b', 'x'.repeat(256), 'é', 12, null]) {
          await assert.rejects(
            sender.notifications.pushEachOnce('default', bad as string, items(11)),
            (e: { code?: string }) => e.code === 'INVALID_ARGUMENT',
          );
        }
        await assert.rejects(
          sender.notifications.pushEachOnce('default', `${key}-4`, [
            { recipient: a.id, notification: invite(1) },
            { recipient: a.id, notification: invite(2) },
          ]),
          (e: { code?: string }) => e.code === 'INVALID_ARGUMENT',
        );
        assert.equal(await rowCount(), before, 'a refused batch writes no row');
      } finally {
        for (const s of sockets.splice(0)) s.close();
      }
    });

    it('copies of one request at once on every node write one set, even naming other recipients', async () => {
      const [a, b, c] = [await newUser(), await newUser(), await newUser()];
      const key = `meeting_invite:835-000-036:${a.id}:race-${userSeq}`;
      // Copies that decided differently (the state moved between them): [a, b] or [c].
      const copies = [0, 1, 2, 3, 4, 5].map((i) => {
        const node = nodes[i % nodes.length]!;
        const items =
          i % 2 === 0
            ? [
                { recipient: a.id, notification: invite(i) },
                { recipient: b.id, notification: invite(i) },
              ]
            : [{ recipient: c.id, notification: invite(i) }];
        return node.notifications.pushEachOnce('default', key, items);
      });
      const results = await Promise.all(copies);
      const winners = results.filter((r) => r.fresh);
      assert.equal(winners.length, 1, 'one copy wrote');
      const written = winners[0]!.notifications;
      for (const r of results) assert.deepEqual(r.notifications, written);
      const rows = [
        ...(await rowsOf('default', a.id)),
        ...(await rowsOf('default', b.id)),
        ...(await rowsOf('default', c.id)),
      ];
      assert.deepEqual(
        rows.map((r) => Number(r.id)).sort((x, y) => x - y),
        written.map((p) => p.notification.id).sort((x, y) => x - y),
      );
    });

    it('pages newest first with before_id and limit: every notification once, no gaps', async () => {
      const user = await newUser();
      const other = await newUser();
      const ids: number[] = [];
      for (let n = 1; n <= 7; n++) {
        const [mine] = await push([user], n);
        await push([other], n); // interleaved ids of someone else
        ids.push(mine!.notification.id);
      }
      const newestFirst = [...ids].reverse();
      const seen: number[] = [];
      let query = '?limit=3';
      const pages: boolean[] = [];
      for (;;) {
        const page = await list(user, query);
        seen.push(...page.list.map((n) => n.id));
        pages.push(page.has_more);
        if (!page.has_more) break;
        query = `?limit=3&before_id=${page.list[page.list.length - 1]!.id}`;
      }
      assert.deepEqual(seen, newestFirst);
      assert.deepEqual(pages, [true, true, false]);
      // Exactly a page's worth left: no empty extra page is promised.
      const lastSix = await list(user, `?limit=6&before_id=${newestFirst[0]}`);
      assert.deepEqual([lastSix.list.length, lastSix.has_more], [6, false]);
      const all = await list(user); // default 20
      assert.deepEqual(
        all.list.map((n) => n.id),
        newestFirst,
      );
      assert.equal(all.has_more, false);
      const titles = all.list.map((n) => n.title);
      assert.deepEqual(
        titles,
        [7, 6, 5, 4, 3, 2, 1].map((n) => `会议邀请 ${n}`),
      );
      const oldest = await list(user, `?before_id=${ids[0]}`);
      assert.deepEqual([oldest.list, oldest.has_more], [[], false]);
    });

    it('counts unread, marks one read (own only, twice is fine) and all read', async () => {
      const owner = await newUser();
      const intruder = await newUser();
      const pushed = [];
      for (let n = 1; n <= 3; n++) pushed.push((await push([owner], n))[0]!.notification);
      await push([intruder], 9);
      assert.equal(await unread(owner), 3);
      const first = pushed[0]!;

      // Someone else's id: 404, and nothing changes for its owner.
      const foreign = await call('POST', `/api/v1/notifications/${first.id}/read`, intruder.token);
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.reason, 'NOTIFICATION_NOT_FOUND');
      assert.equal(foreign.body.code, 404);
      assert.equal(
        (await call('POST', '/api/v1/notifications/999999999/read', owner.token)).status,
        404,
      );
      assert.equal(await unread(owner), 3);
      assert.equal((await rowsOf('default', owner.id)).filter((r) => Number(r.is_read)).length, 0);

      const read = await markRead(first.id, owner);
      assert.equal(read.id, first.id);
      assert.equal(read.is_read, true);
      assert.match(read.read_at ?? '', TIME);
      assert.equal(await unread(owner), 2);
      const readAtMs = Number((await rowsOf('default', owner.id))[0]!.read_at_ms);
      await eventually(() => Date.now() > readAtMs + 2); // so that a new read time would differ
      const again = await markRead(first.id, owner);
      assert.deepEqual(again, read, 'a repeat answers the same');
      const kept = Number((await rowsOf('default', owner.id))[0]!.read_at_ms);
      assert.equal(kept, readAtMs, 'the first read time is kept');
      assert.equal(await unread(owner), 2);
      const listed = (await list(owner)).list.find((n) => n.id === first.id);
      assert.deepEqual(listed, read);

      assert.deepEqual(await ok('POST', '/api/v1/notifications/read-all', owner), { updated: 2 });
      assert.equal(await unread(owner), 0);
      assert.ok((await list(owner)).list.every((n) => n.is_read));
      assert.deepEqual(await ok('POST', '/api/v1/notifications/read-all', owner), { updated: 0 });
      assert.equal(await unread(intruder), 1, "another user's notifications stay unread");
    });

    it("another app's notifications are invisible: not listed, not counted, not markable", async () => {
      const user = await newUser();
      const stranger = await newUser('other_app');
      // The same user id in another app, and an app's own user: neither is this user's.
      const [elsewhere] = await push([user.id], 1, 'other_app');
      await push([stranger], 2, 'other_app');
      const [mine] = await push([user], 3);
      assert.deepEqual(
        (await list(user)).list.map((n) => n.id),
        [mine!.notification.id],
      );
      assert.equal(await unread(user), 1);
      const foreign = await call(
        'POST',
        `/api/v1/notifications/${elsewhere!.notification.id}/read`,
        user.token,
      );
      assert.equal(foreign.status, 404);
      assert.deepEqual(await ok('POST', '/api/v1/notifications/read-all', user), { updated: 1 });
      const untouched = await rowsOf('other_app', user.id);
      assert.deepEqual(
        untouched.map((r) => Number(r.is_read)),
        [0],
      );
      assert.equal(await unread(stranger), 1);
      assert.deepEqual(
        (await list(stranger)).list.map((n) => n.title),
        ['会议邀请 2'],
      );
    });

    it('the node deletes notifications older than ROOMS_NOTIFICATION_RETENTION_MS; the list and unread count agree', async () => {
      const DAY = 86_400_000;
      const user = await newUser();
      const ids: number[] = [];
      for (let n = 1; n <= 4; n++) ids.push((await push([user], n))[0]!.notification.id);
      await markRead(ids[0]!, user);
      const age = (id: number, ms: number) =>
        sender.sql.db
          .updateTable('notifications')
          .set({ created_at_ms: Date.now() - ms })
          .where('id', '=', id)
          .execute();
      // The default retention is 30 days: two older, one younger.
      assert.equal(sender.notificationRetention.config.retentionMs, 30 * DAY);
      await age(ids[0]!, 31 * DAY);
      await age(ids[1]!, 31 * DAY);
      await age(ids[2]!, 29 * DAY);
      // Twice: the first may join a background sweep that began before the rows aged.
      await sender.notificationRetention.sweep();
      await sender.notificationRetention.sweep();
      const page = await list(user);
      assert.deepEqual(
        page.list.map((n) => n.id),
        [ids[3], ids[2]],
      );
      assert.equal(page.has_more, false);
      assert.equal(await unread(user), 2);
      const gone = await call('POST', `/api/v1/notifications/${ids[1]}/read`, user.token);
      assert.equal(gone.status, 404);
      assert.deepEqual(await ok('POST', '/api/v1/notifications/read-all', user), { updated: 2 });
    });

    it('pushes notification.new live to every socket of the recipient, and to nobody else', async () => {
      const [alice, bob] = [await newUser(), await newUser()];
      try {
        // One socket on each node for alice, bob on the reading node.
        const aliceHere = await connect(reader, alice);
        const aliceThere = await connect(sender, alice);
        const bobs = await connect(reader, bob);

        await push([alice.id], 1, 'other_app'); // the same user id in another app: not alice
        const [sent] = await push([alice], 2);
        await eventually(() => aliceHere.news().length > 0 && aliceThere.news().length > 0);
        for (const socket of [aliceHere, aliceThere]) {
          assert.equal(socket.news().length, 1);
          const frame = socket.news()[0]!;
          assert.equal(frame.code, 0);
          assert.deepEqual(frame.data, sent!.notification);
        }
        assert.deepEqual(aliceHere.news()[0]!.data, (await list(alice)).list[0]);

        // A marker for bob, sent after alice's: once it arrives, alice's would have too.
        const [marker] = await push([bob], 3);
        await eventually(() => bobs.news().length > 0);
        assert.deepEqual(
          bobs.news().map((f) => f.data.id),
          [marker!.notification.id],
        );
        assert.equal(aliceHere.news().length, 1, "alice does not get bob's");
      } finally {
        for (const socket of sockets.splice(0)) socket.close();
      }
    });

    it('refuses bad query strings and ids with 400, and calls without a token with 401', async () => {
      const user = await newUser();
      await push([user]);
      const bad = [
        '?limit=0x10',
        '?limit=0',
        '?limit=51',
        '?limit=1e1',
        '?limit=',
        '?limit=%205',
        '?limit=-1',
        '?limit=1&limit=2',
        '?before_id=-1',
        '?before_id=0',
        '?before_id=abc',
        '?before_id=1.5',
        '?before_id=',
        '?before_id=9007199254740993',
        '?before_id=0x10',
      ];
      for (const query of bad) {
        const res = await call('GET', `/api/v1/notifications${query}`, user.token);
        assert.equal(res.status, 400, `${query}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 400);
        assert.equal(res.body.reason, 'BAD_REQUEST', query);
      }
      for (const id of ['abc', '0', '-1', '01', '1.0', '0x10', '9007199254740993']) {
        const res = await call('POST', `/api/v1/notifications/${id}/read`, user.token);
        assert.equal(res.status, 400, `${id}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.reason, 'BAD_REQUEST');
      }
      assert.equal(await unread(user), 1, 'nothing was marked');
      for (const [method, url] of [
        ['GET', '/api/v1/notifications'],
        ['GET', '/api/v1/notifications/unread-count'],
        ['POST', '/api/v1/notifications/read-all'],
        ['POST', '/api/v1/notifications/1/read'],
      ] as const) {
        const res = await call(method, url);
        assert.equal(res.status, 401, url);
        const forged = await call(method, url, `${user.token}x`);
        assert.equal(forged.status, 401, url);
      }
      assert.equal(await unread(user), 1);
    });
  });
}
