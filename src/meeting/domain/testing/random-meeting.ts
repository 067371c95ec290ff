/**
 * Test-only: random command sequences for the meeting's property tests, and a "world" that
 * runs them like the cell runtime does (a command for a meeting that does not exist and may
 * not create it is refused before decide; decide, then evolve; version + 1 per command with
 * events), keeping the log for the replay check.
 */
import fc from 'fast-check';
import { isDomainError, type Decision } from '../../../domain/decider.js';
import { meetingKind } from '../domain.js';
import type { MeetingCommand, MeetingEvent, MeetingState, PasswordVerdict } from '../types.js';
import { CODE, ctx, deepFreeze, HASH, MEETING_ID, settings, T0 } from './given-when-then.js';

export const kind = meetingKind(settings);
export const USERS = ['u-host', 'u-1', 'u-2', 'u-3', '__proto__'] as const;

type User = (typeof USERS)[number];

/** A command, or the timer worker waking exactly at the next deadline. */
export type Spec =
  | { readonly t: 'command'; readonly command: MeetingCommand }
  /** `far`: also wake for the stale deadline hours away (rarely, or every meeting goes stale). */
  | { readonly t: 'alarm'; readonly far: boolean };

export interface Step {
  /** Time passing before the step: mostly short, sometimes past a TTL or the stale limit. */
  readonly dt: number;
  readonly spec: Spec;
}

const user = fc.constantFrom<User>(...USERS);
/** The nodes reporting sockets (`__proto__` is a valid node id too). */
const node = fc.constantFrom('node-a', 'node-b', '__proto__');
const verdict = fc.constantFrom<PasswordVerdict>(
  'not_required',
  'missing',
  'locked',
  'wrong',
  'ok',
);
const maybeBool = fc.option(fc.boolean(), { nil: undefined });

const commandArb: fc.Arbitrary<MeetingCommand> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc
      .record({
        host: user,
        max: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
        password: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
        // Rarely refused for another meeting, so that most runs create one.
        other: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      })
      .map(({ host, max, password, other }): MeetingCommand => ({
        type: 'CreateMeeting',
        meeting_id: MEETING_ID,
        host_user_id: host,
        host_participant_id: `p-${host}`,
        room_code: CODE,
        title: '周会',
        password_hash: password ? HASH : null,
        max_members: max,
        in_other_meeting: other,
      })),
  },
  {
    weight: 8,
    arbitrary: fc
      .record({ u: user, password: verdict, other: fc.integer({ min: 0, max: 9 }), pid: fc.nat(3) })
      .map(({ u, password, other, pid }): MeetingCommand => ({
        type: 'JoinMeeting',
        user_id: u,
        // Mostly the user's own row id; sometimes another user's (must be refused).
        participant_id: pid === 0 ? `p-${USERS[other % USERS.length]}` : `p-${u}`,
        in_other_meeting: other === 0,
        password,
      })),
  },
  { weight: 5, arbitrary: user.map((u): MeetingCommand => ({ type: 'LeaveMeeting', user_id: u })) },
  {
    weight: 1,
    arbitrary: user.map((u): MeetingCommand => ({ type: 'EndMeeting', operator_user_id: u })),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(user, user).map(([op, target]): MeetingCommand => ({
      type: 'TransferHost',
      operator_user_id: op,
      target_user_id: target,
    })),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(user, user).map(([op, target]): MeetingCommand => ({
      type: 'KickMember',
      operator_user_id: op,
      target_user_id: target,
    })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        u: user,
        target: fc.option(user, { nil: undefined }),
        a: maybeBool,
        v: maybeBool,
        h: maybeBool,
      })
      .map(({ u, target, a, v, h }): MeetingCommand => ({
        type: 'ChangeMemberState',
        user_id: u,
        target_user_id: target,
        audio_enabled: a,
        video_enabled: v,
        hand_raised: h,
      })),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(user, fc.constantFrom('hi', '', 'x'.repeat(501), '你好'))
      .map(([u, content]): MeetingCommand => ({ type: 'SendChat', user_id: u, content })),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(user, node)
      .map(([u, n]): MeetingCommand => ({ type: 'MarkSocketLive', user_id: u, node_id: n })),
  },
  {
    weight: 4,
    arbitrary: fc
      .tuple(user, node)
      .map(([u, n]): MeetingCommand => ({ type: 'MarkSocketsGone', user_id: u, node_id: n })),
  },
  { weight: 1, arbitrary: fc.constant<MeetingCommand>({ type: 'ExpireMeetingDeadlines' }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(user, fc.boolean(), fc.constantFrom('LockMeeting', 'MuteAll', 'AllowSelfUnmute'))
      .map(([op, on, type]): MeetingCommand => {
        if (type === 'LockMeeting') return { type, operator_user_id: op, locked: on };
        if (type === 'MuteAll') return { type, operator_user_id: op, allow_unmute: on };
        return { type, operator_user_id: op, allowed: on };
      }),
  },
);

const dtArb = fc.oneof(
  { weight: 100, arbitrary: fc.integer({ min: 0, max: 2_000 }) },
  { weight: 12, arbitrary: fc.integer({ min: 0, max: settings.emptyTtlMs + 1_000 }) },
  { weight: 1, arbitrary: fc.constant(settings.staleMs) },
);

export const stepArb: fc.Arbitrary<Step> = fc.record({
  dt: dtArb,
  spec: fc.oneof(
    { weight: 9, arbitrary: commandArb.map((command): Spec => ({ t: 'command', command })) },
    {
      weight: 2,
      arbitrary: fc.nat(9).map((n): Spec => ({ t: 'alarm', far: n === 0 })),
    },
  ),
});

/** Mostly a meeting created at once (else most steps only meet 会议不存在), then random steps. */
export const scenarioArb: fc.Arbitrary<Step[]> = fc
  .tuple(fc.nat(9), fc.array(stepArb, { minLength: 10, maxLength: 80, size: 'max' }))
  .map(([n, steps]) =>
    n === 0
      ? steps
      : [
          {
            dt: 0,
            spec: {
              t: 'command',
              command: {
                type: 'CreateMeeting',
                meeting_id: MEETING_ID,
                host_user_id: USERS[0],
                host_participant_id: `p-${USERS[0]}`,
                room_code: CODE,
                title: '周会',
                password_hash: n % 4 === 0 ? HASH : null,
                max_members: 2 + (n % 4),
                in_other_meeting: false,
              },
            },
          },
          ...steps,
        ],
  );

export interface World {
  nowMs: number;
  version: number;
  state: MeetingState;
  readonly events: MeetingEvent[];
  chats: number;
}

export function newWorld(): World {
  return {
    nowMs: T0,
    version: 0,
    state: deepFreeze(kind.initialState(ctx().key)),
    events: [],
    chats: 0,
  };
}

/** The command a step runs (the alarm waits for the next deadline), or null for none. */
export function commandOf(world: World, spec: Spec): MeetingCommand | null {
  if (spec.t === 'command') return spec.command;
  const due = kind.nextDeadline(world.state);
  if (due === null || (!spec.far && due - world.nowMs > settings.emptyTtlMs)) return null;
  world.nowMs = Math.max(world.nowMs, due);
  return kind.alarmCommand(world.state, world.nowMs);
}

/** Runs one command like the runtime: not-found before decide, commit only with events. */
export function run(world: World, command: MeetingCommand): Decision<MeetingEvent> {
  if (world.state.status === null && !kind.creates!(command)) return kind.notFound!;
  const result = kind.decide(
    world.state,
    command,
    ctx({ nowMs: world.nowMs, version: world.version + 1 }),
  );
  if (!isDomainError(result) && result.length > 0) {
    world.version += 1;
    world.events.push(...result);
    world.chats += result.filter((e) => e.type === 'ChatSent').length;
    world.state = deepFreeze(result.reduce((s, e) => kind.evolve(s, e), world.state));
  }
  return result;
}
