/**
 * The meeting scenario: each meeting's host creates it, its members join over REST and
 * follow it over `/ws` (`meeting.room.join`, the seed's signalling); then, per meeting and
 * second, chat lines and hand raises. Every member's socket counts the frames these owe it.
 * With `--media`, every member listens (plain RTP) and the host talks throughout.
 */
import { requestId } from '../../client/src/index.js';
import type { LoadOptions } from './options.js';
import { RoomAudio } from './plain-audio.js';
import type { Recorder } from './recorder.js';
import { atRate, openSocket, pool, type CountingSocket } from './sockets.js';
import type { LoadUser } from './users.js';
import { settle } from './voice.js';

const COUNTED = new Set(['meeting.chat', 'meeting.member.state.changed']);

interface Meeting {
  readonly code: string;
  readonly host: LoadUser;
  readonly members: LoadUser[];
  readonly sockets: CountingSocket[];
  readonly socketOf: Map<number, CountingSocket>;
  /** Whose hand is up: a raise toggles it, so that each one changes the state. */
  readonly hands: Map<number, boolean>;
  /** `--media` only. */
  readonly audio: RoomAudio | null;
}

export async function meetingScenario(
  options: LoadOptions,
  recorder: Recorder,
  users: readonly LoadUser[],
): Promise<void> {
  const perMeeting = options.listeners + 1;
  const meetings: Meeting[] = [];
  try {
    for (let m = 0; m < options.rooms; m++) {
      const [host, ...members] = users.slice(m * perMeeting, (m + 1) * perMeeting) as [LoadUser];
      const created = await host.rest.call('createMeeting', {
        body: { title: `load ${m + 1}`, request_id: requestId() },
      });
      const meeting: Meeting = {
        code: created.room.room_code,
        host,
        members,
        sockets: [],
        socketOf: new Map(),
        hands: new Map(),
        audio: options.media
          ? new RoomAudio(
              { prefix: 'meeting', field: 'room_code', id: created.room.room_code },
              recorder,
            )
          : null,
      };
      meetings.push(meeting);
      await follow(options, meeting, host);
    }
    await pool(
      options.joinConcurrency,
      meetings.flatMap((meeting) =>
        meeting.members.map(
          (user) => () =>
            recorder.time('join', async () => {
              await user.rest.call('joinMeeting', {
                path: { code: meeting.code },
                body: { request_id: requestId() },
              });
              await follow(options, meeting, user);
            }),
        ),
      ),
    );
    const until = performance.now() + options.durationS * 1_000;
    await Promise.all(meetings.flatMap((meeting) => drive(options, recorder, meeting, until)));
  } finally {
    await settle(recorder, meetings, (meeting) =>
      meeting.host.rest.call('endMeeting', {
        path: { code: meeting.code },
        body: { request_id: requestId() },
      }),
    );
  }
}

/** `--media`: the host produces audio and talks until the traffic stops. */
async function hostTalks(recorder: Recorder, meeting: Meeting, until: number): Promise<void> {
  if (!meeting.audio) return;
  const { client } = meeting.socketOf.get(meeting.host.id)!;
  const talking = await recorder.time('produce', () =>
    meeting.audio!.speaker(client, meeting.host.id).produce(),
  );
  await talking?.talk(until - performance.now());
}

async function follow(options: LoadOptions, meeting: Meeting, user: LoadUser) {
  const socket = await openSocket(options.url, user, COUNTED);
  await socket.client.request('meeting.room.join', { room_code: meeting.code });
  meeting.sockets.push(socket);
  meeting.socketOf.set(user.id, socket);
  await meeting.audio?.listen(socket.client, user.id);
}

function drive(options: LoadOptions, recorder: Recorder, meeting: Meeting, until: number) {
  const owe = () => (recorder.framesOwed += meeting.sockets.length);
  const people = [meeting.host, ...meeting.members];
  const member = (i: number) => people[i % people.length]!;
  return [
    hostTalks(recorder, meeting, until),
    atRate(options.chatRate, until, async (i) => {
      const sent = await recorder.time('chat', () =>
        member(i).rest.call('sendChat', {
          path: { code: meeting.code },
          body: { content: `load line ${i}`, request_id: requestId() },
        }),
      );
      if (sent) owe();
    }),
    atRate(options.seatRate, until, async (i) => {
      const user = member(i);
      const raised = !(meeting.hands.get(user.id) ?? false);
      meeting.hands.set(user.id, raised);
      const done = await recorder.time('hand', () =>
        meeting.socketOf.get(user.id)!.client.request('meeting.member.state.changed', {
          room_code: meeting.code,
          hand_raised: raised,
        }),
      );
      if (done !== undefined) owe();
    }),
  ];
}
