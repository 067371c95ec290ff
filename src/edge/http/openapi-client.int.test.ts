/**
 * A client generated from the served OpenAPI document, as a client team makes one: the
 * document at /docs/json goes through @hey-api/openapi-ts (types, SDK functions, fetch
 * client), a program written against the generated names must type-check (answers are
 * typed, not `unknown`; a field that does not exist is an error, so the types are not `any`
 * either), and the same program then runs against a listening node and gets what its types
 * say.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createClient } from '@hey-api/openapi-ts';
import ts from 'typescript';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';

/** What a team writes against the generated client: every call by its operationId. */
const PROGRAM = `
import { client } from './generated/client.gen';
import {
  createMeeting,
  createRoom,
  getMeeting,
  getRoom,
  joinMeeting,
  login,
  register,
} from './generated/sdk.gen';
import type { Error as ApiError, Participant, Seat } from './generated/types.gen';

export async function scenario(baseUrl: string) {
  client.setConfig({ baseUrl });
  const credentials = { username: 'generated_alice', password: 'secret123' };
  await register({ body: credentials, throwOnError: true });
  const session = await login({ body: credentials, throwOnError: true });
  const auth = 'Bearer ' + session.data.data.access_token;
  const headers = { authorization: auth };

  const created = await createMeeting({ headers, body: { title: 'Weekly' }, throwOnError: true });
  const code: string = created.data.data.room.room_code;
  const detail = await getMeeting({ headers, path: { code }, throwOnError: true });
  const host: Participant | undefined = detail.data.data.participants[0];
  const roleLabel: '主持人' | '参会者' | undefined = host?.role_label;

  const voice = await createRoom({ headers, body: { title: 'Lounge' }, throwOnError: true });
  const room = await getRoom({ headers, path: { room_id: voice.data.data.room_id }, throwOnError: true });
  const seat: Seat | undefined = room.data.data.seats[0];
  const seatState: 'idle' | 'locked' | 'pending_publish' | 'publishing' | undefined = seat?.state;

  const refused = await joinMeeting({ headers, path: { code: '000-000-000' } });
  const error: ApiError | undefined = refused.error;
  const reason = refused.error?.reason;
  // @ts-expect-error the answer is typed: a field it does not have is an error, not \`any\`
  void created.data.data.room.no_such_field;
  return { code, roleLabel, seatState, status: refused.response.status, reason, message: error?.message };
}
`;

describe('a client generated from /docs/json with @hey-api/openapi-ts', () => {
  let app: TestHttpApp;
  let dir: string;
  let baseUrl: string;

  before(async () => {
    app = await startTestHttpApp({});
    baseUrl = await app.http.listen({ host: '127.0.0.1', port: 0 });
    dir = await mkdtemp(join(tmpdir(), 'rooms-generated-client-'));
    const document = await fetch(`${baseUrl}/docs/json`);
    assert.equal(document.status, 200);
    await writeFile(join(dir, 'openapi.json'), await document.text());
    await createClient({
      input: join(dir, 'openapi.json'),
      output: { path: join(dir, 'generated') },
      logs: { level: 'silent' },
    });
    await writeFile(join(dir, 'program.ts'), PROGRAM);
  });
  after(async () => {
    await app?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('type-checks a program that reads the answers by their fields', () => {
    const program = ts.createProgram([join(dir, 'program.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      skipLibCheck: true,
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(problems, []);
  });

  it('runs against the node and gets what its types say', async () => {
    const { scenario } = (await import(join(dir, 'program.ts'))) as {
      scenario: (baseUrl: string) => Promise<Record<string, unknown>>;
    };
    const outcome = await scenario(baseUrl);
    assert.match(String(outcome.code), /^\d{3}-\d{3}-\d{3}$/);
    assert.equal(outcome.roleLabel, '主持人');
    assert.equal(outcome.seatState, 'idle');
    assert.deepEqual([outcome.status, outcome.reason], [404, 'MEETING_NOT_FOUND']);
    assert.equal(outcome.message, '会议不存在');
  });
});
