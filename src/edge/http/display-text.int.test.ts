/**
 * Display texts that others read (nicknames, voice-room titles, meeting titles) refuse the
 * invisible characters that disguise them, tried from outside over REST: a right-to-left
 * override that makes a title read backwards, zero-width characters that make two names
 * look the same. Each is refused with 400 and creates nothing; real text (emoji sequences
 * with joiners, Arabic with direction marks) is accepted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';

interface Answer {
  status: number;
  body: { code: number; message: string; data: any };
}

/** Each disguise, inside an otherwise ordinary text. */
const DISGUISED = [
  'evil\u202Egnp.exe', // RIGHT-TO-LEFT OVERRIDE
  'a\u202Db', // LEFT-TO-RIGHT OVERRIDE
  'x\u2067y\u2069', // RIGHT-TO-LEFT ISOLATE … POP DIRECTIONAL ISOLATE
  'ad\u200Bmin', // ZERO WIDTH SPACE
  'ad\u2060min', // WORD JOINER
  'ad\uFEFFmin', // ZERO WIDTH NO-BREAK SPACE inside the text
];
/** A family emoji (joined by U+200D), Persian with a ZWNJ, Arabic with a right-to-left mark. */
const REAL = ['👨\u200D👩\u200D👧 family', 'می\u200Cخواهم', 'غرفة\u200F 1'];

describe('display texts refuse direction overrides and zero-width characters', () => {
  let app: TestHttpApp;
  let token = '';

  const call = async (url: string, body: unknown, auth = true): Promise<Answer> => {
    const res = await app.http.inject({
      method: 'POST',
      url: `/api/v1${url}`,
      headers: {
        'content-type': 'application/json',
        ...(auth ? { authorization: `Bearer ${token}` } : {}),
      },
      payload: JSON.stringify(body),
    });
    return { status: res.statusCode, body: res.json() };
  };
  const refused = (r: Answer, what: string) => {
    assert.equal(r.status, 400, `${what}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.message, /direction overrides or zero-width/, what);
  };

  before(async () => {
    app = await startTestHttpApp();
    await call('/auth/register', { username: 'texter', password: 'secret123' }, false);
    const login = await call('/auth/login', { username: 'texter', password: 'secret123' }, false);
    token = login.body.data.access_token;
  });
  after(async () => {
    await app?.close();
  });

  it('nicknames', async () => {
    for (const [i, nickname] of DISGUISED.entries()) {
      const r = await call(
        '/auth/register',
        { username: `nick${i}`, password: 'secret123', nickname },
        false,
      );
      refused(r, JSON.stringify(nickname));
      // Nothing was created: the name is still free.
      const again = await call(
        '/auth/register',
        { username: `nick${i}`, password: 'secret123' },
        false,
      );
      assert.equal(again.body.code, 0, JSON.stringify(again.body));
    }
    for (const [i, nickname] of REAL.entries()) {
      const r = await call(
        '/auth/register',
        { username: `real${i}`, password: 'secret123', nickname },
        false,
      );
      assert.equal(r.body.code, 0, JSON.stringify(r.body));
    }
  });

  it('voice-room titles', async () => {
    for (const title of DISGUISED) refused(await call('/voice/rooms', { title }), title);
    const lobby = await app.http.inject({
      url: '/api/v1/voice/rooms',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.deepEqual(lobby.json().data.list, [], 'no refused room was created');
    for (const title of REAL) {
      const r = await call('/voice/rooms', { title });
      assert.equal(r.body.code, 0, JSON.stringify(r.body));
    }
  });

  it('meeting titles', async () => {
    for (const title of DISGUISED) refused(await call('/meeting/rooms', { title }), title);
    const mine = await app.http.inject({
      url: '/api/v1/meeting/rooms/mine',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(mine.json().data.total ?? mine.json().data.list.length, 0, mine.body);
    // One meeting at a time per user: each real title by a host of its own.
    for (const [i, title] of REAL.entries()) {
      const user = { username: `host${i}`, password: 'secret123' };
      await call('/auth/register', user, false);
      token = (await call('/auth/login', user, false)).body.data.access_token;
      const r = await call('/meeting/rooms', { title });
      assert.equal(r.body.code, 0, JSON.stringify(r.body));
    }
  });
});
