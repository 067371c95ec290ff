/**
 * The package as a user installs it: `npm pack` builds and packs it, a fresh project
 * installs the tarball (nothing else: the package has no dependency), a plain JavaScript
 * program runs against a node (REST, then the socket: Node's own WebSocket), and a
 * TypeScript program type-checks against the published types, the media entry's with
 * mediasoup-client (its optional peer) beside it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import ts from 'typescript';
import { mediaSkipReason } from '../../../src/media-server/testing/harness.js';
import { startMeetingNode, type MeetingNode } from '../../../src/main/testing/meeting-node.js';

const run = promisify(execFile);
const mediasoupClient = join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'node_modules',
  'mediasoup-client',
);
const packageDir = join(import.meta.dirname, '..');

const TYPED = `
import {
  ApiError,
  RealtimeClient,
  RestClient,
  type ReasonOf,
  type RefusalOf,
  type ReplyOf,
} from '@echochat/client';
import { MeetingMedia, VoiceMedia } from '@echochat/client/media';

export async function roomCode(rest: RestClient): Promise<string> {
  const created: ReplyOf<'createMeeting'> = await rest.call('createMeeting', { body: { title: 'Typed' } });
  return created.room.room_code;
}
export function isFull(error: ApiError<ReasonOf<'joinMeeting'>>): boolean {
  return error.reason === 'MEETING_FULL';
}
// @ts-expect-error an operation the API does not have
export const missing = (rest: RestClient) => rest.call('noSuchOperation');

export async function follow(socket: RealtimeClient): Promise<number> {
  const ack = await socket.request('room.subscribe', { room_id: 'r1', since_event_id: 'e1' });
  const replayed: unknown[] | undefined = ack.replay;
  socket.on('meeting.chat', (frame) => {
    const text: string = frame.data.content;
    const author: number = frame.data.user_id;
    void [text, author];
  });
  // @ts-expect-error a field the frame does not have
  socket.on('meeting.chat', (frame) => frame.data.no_such_field);
  // @ts-expect-error room.subscribe needs a room_id
  await socket.request('room.subscribe', {});
  const refusal: RefusalOf<'meeting.room.join'> = 'MEETING_NOT_FOUND';
  void refusal;
  return replayed?.length ?? 0;
}

export function media(socket: RealtimeClient): [number, string] {
  const meeting = new MeetingMedia(socket, { roomCode: '835-000-036', selfId: 17, onError: () => undefined });
  const voice = new VoiceMedia(socket, { roomId: 'r1', selfId: 17, onError: () => undefined });
  // @ts-expect-error a meeting's user ids are numbers
  void new MeetingMedia(socket, { roomCode: '835-000-036', selfId: '17', onError: () => undefined });
  // @ts-expect-error a voice room's user ids are numbers too
  void new VoiceMedia(socket, { roomId: 'r1', selfId: '17', onError: () => undefined });
  return [meeting.remote.size, voice.status];
}
`;

const PROGRAM = `
import { RestClient, RealtimeClient, socketUrl } from '@echochat/client';

const baseUrl = process.env.BASE_URL;
let token = '';
const rest = new RestClient({ baseUrl, token: () => token });
const credentials = { username: 'packed_user', password: 'secret123' };
await rest.call('register', { body: credentials });
token = (await rest.call('login', { body: credentials })).access_token;
const created = await rest.call('createMeeting', { body: { title: 'Packed' } });
const ws = new RealtimeClient({ url: () => socketUrl(baseUrl, token) });
ws.connect();
const ack = await ws.request('room.subscribe', { room_id: created.room.room_code });
ws.close();
console.log(JSON.stringify({ code: created.room.room_code, followed: ack.room_id }));
`;

describe(
  'npm pack of @echochat/client, installed in a fresh project',
  { skip: mediaSkipReason() },
  () => {
    let started: MeetingNode | undefined;
    let dir: string;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'rooms-client-pack-'));
      const packed = await run('npm', ['pack', '--pack-destination', dir, '--json'], {
        cwd: packageDir,
      });
      const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
      await writeFile(
        join(dir, 'package.json'),
        JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
      );
      await run(
        'npm',
        [
          'install',
          '--offline',
          '--no-audit',
          '--no-fund',
          '--ignore-scripts',
          join(dir, filename),
        ],
        { cwd: dir },
      );
      await writeFile(join(dir, 'typed.ts'), TYPED);
      await writeFile(join(dir, 'program.mjs'), PROGRAM);
      started = await startMeetingNode([]);
    });
    after(async () => {
      await started?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('runs a plain JavaScript program against a node: REST and the socket', async () => {
      const { stdout } = await run(process.execPath, ['--experimental-websocket', 'program.mjs'], {
        cwd: dir,
        env: { ...process.env, BASE_URL: started!.node.httpAddress },
      });
      const outcome = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
        code: string;
        followed: string;
      };
      assert.match(outcome.code, /^\d{3}-\d{3}-\d{3}$/);
      assert.equal(outcome.followed, outcome.code);
    });

    it('type-checks a program against the published types, media included', async () => {
      // The media entry's peer, only now: the JavaScript program ran without it (the main
      // entry never loads it). Linked from this repository's install: the test is offline.
      await run(
        'npm',
        ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', mediasoupClient],
        { cwd: dir },
      );
      const program = ts.createProgram([join(dir, 'typed.ts')], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
        types: [],
      });
      const problems = ts
        .getPreEmitDiagnostics(program)
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      assert.deepEqual(problems, []);
    });
  },
);
