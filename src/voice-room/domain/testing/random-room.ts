/**
 * Test-only: random command sequences for the voice room's property tests, and a "world"
 * that runs them like the cell runtime does (decide, then evolve; version + 1 per command
 * with events), remembering what the checks need apart from the state itself.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isDomainError } from '../../../domain/decider.js';
import { voiceRoomDomain } from '../domain.js';
import type { VoiceRoomCommand, VoiceRoomEvent, VoiceRoomState } from '../types.js';
import { ctx, deepFreeze, settings, T0 } from './given-when-then.js';

export const domain = voiceRoomDomain(settings);
export const OWNER = 'u-owner';
export const ADMIN = 'u-admin';
export const USERS = [OWNER, ADMIN, 'u-1', '__proto__'] as const;
export const SEATS = 3;

export type User = (typeof USERS)[number];
/** The n-th user currently on a seat (any user if nobody is). */
type Holder = { readonly holder: number };
type RtcType = 'RtcAudioStarted' | 'RtcAudioStopped' | 'RtcRoomExited';
/** Which mic session a command names: the user's current one, one seen before, or none. */
type SessionRef =
  { readonly k: 'current' } | { readonly k: 'past'; readonly n: number } | { readonly k: 'none' };

/** A command with its session ids and RTC times still to be resolved against the history. */
type Spec =
  | { readonly t: 'JoinRoom' | 'LeaveRoom' | 'RoomHeartbeat'; readonly user: User }
  | { readonly t: 'KickUser' | 'UnbanUser'; readonly user: User; readonly op: User }
  | { readonly t: 'SetRoomAdmin'; readonly user: User; readonly op: User; readonly on: boolean }
  | { readonly t: 'SetMicSeatLock'; readonly seat: number; readonly op: User; readonly on: boolean }
  | { readonly t: 'MicUp' | 'ChangeMicSeat'; readonly user: User; readonly seat: number }
  | { readonly t: 'MicDown'; readonly user: User; readonly op: User | null }
  | {
      readonly t: 'ConfirmMicPublishing';
      readonly user: User | Holder;
      readonly session: SessionRef;
    }
  | {
      readonly t: RtcType;
      readonly user: User | Holder;
      readonly session: SessionRef;
      /** Event time relative to now: mostly a little in the past, sometimes far. */
      readonly age: number;
    }
  /** Delivers an earlier RTC callback again (duplicates, reordering). */
  | { readonly t: 'ReplayRtc'; readonly n: number }
  | { readonly t: 'SendGift'; readonly user: User; readonly to: readonly User[] }
  | { readonly t: 'ExpireDeadlines' }
  /** The timer worker: wakes exactly at the next deadline and runs the alarm command. */
  | { readonly t: 'Alarm' }
  | { readonly t: 'CloseRoom'; readonly op: User }
  | { readonly t: 'CreateRoom'; readonly user: User }
  | { readonly t: 'UpdateRoom'; readonly op: User; readonly mode: 'free' | 'apply' }
  | { readonly t: 'ApplyForSeat'; readonly user: User; readonly seat: number | null }
  | { readonly t: 'CancelSeatApplication'; readonly user: User }
  | {
      readonly t: 'ApproveSeatApplication';
      readonly user: User;
      readonly op: User;
      readonly seat: number | null;
    }
  | { readonly t: 'RejectSeatApplication'; readonly user: User; readonly op: User }
  | {
      readonly t: 'InviteToSeat';
      readonly user: User;
      readonly op: User;
      readonly seat: number | null;
    }
  | { readonly t: 'AcceptSeatInvitation' | 'DeclineSeatInvitation'; readonly user: User }
  | { readonly t: 'MoveToSeat'; readonly user: User; readonly op: User; readonly seat: number }
  | { readonly t: 'SetSeatCount'; readonly op: User; readonly count: number }
  | { readonly t: 'SetMicMuted'; readonly user: User; readonly on: boolean }
  | { readonly t: 'SetSeatMuted'; readonly seat: number; readonly op: User; readonly on: boolean }
  | { readonly t: 'SendRoomMessage'; readonly user: User }
  | {
      readonly t: 'MuteChatUser';
      readonly user: User;
      readonly op: User;
      readonly seconds: number;
    };

export interface Step {
  readonly dt: number;
  readonly spec: Spec;
}

const user = fc.constantFrom(...USERS);
/** Mostly real seats, sometimes one out of range. */
const seat = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: SEATS - 1 }) },
  { weight: 1, arbitrary: fc.constantFrom(-1, SEATS) },
);
const sessionRef: fc.Arbitrary<SessionRef> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ k: 'current' as const }) },
  { weight: 3, arbitrary: fc.nat().map((n) => ({ k: 'past' as const, n })) },
  { weight: 1, arbitrary: fc.constant({ k: 'none' as const }) },
);
/** Mostly someone on a seat (resolved when the step runs), else anyone. */
const rtcUser: fc.Arbitrary<User | Holder> = fc.oneof(
  { weight: 3, arbitrary: fc.nat().map((n) => ({ holder: n })) },
  { weight: 1, arbitrary: user },
);
const rtcType = fc.constantFrom<RtcType>('RtcAudioStarted', 'RtcAudioStopped', 'RtcRoomExited');

const specArb: fc.Arbitrary<Spec> = fc.oneof(
  { weight: 4, arbitrary: user.map((u) => ({ t: 'JoinRoom' as const, user: u })) },
  { weight: 2, arbitrary: user.map((u) => ({ t: 'LeaveRoom' as const, user: u })) },
  { weight: 6, arbitrary: user.map((u) => ({ t: 'RoomHeartbeat' as const, user: u })) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constantFrom('KickUser' as const, 'UnbanUser' as const),
      user,
      op: user,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('SetRoomAdmin' as const),
      user,
      op: fc.oneof({ weight: 3, arbitrary: fc.constant(OWNER) }, { weight: 1, arbitrary: user }),
      on: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('SetMicSeatLock' as const),
      seat,
      op: user,
      on: fc.boolean(),
    }),
  },
  {
    weight: 10,
    arbitrary: fc.record({
      t: fc.constantFrom('MicUp' as const, 'ChangeMicSeat' as const),
      user,
      seat,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('MicDown' as const), user, op: fc.option(user) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('ConfirmMicPublishing' as const),
      user: rtcUser,
      session: sessionRef,
    }),
  },
  {
    weight: 12,
    arbitrary: fc.record({
      t: rtcType,
      user: rtcUser,
      session: sessionRef,
      age: fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: -1_000, max: 3_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 90_000 }) },
      ),
    }),
  },
  { weight: 4, arbitrary: fc.nat().map((n) => ({ t: 'ReplayRtc' as const, n })) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('SendGift' as const),
      user,
      to: fc.subarray([...USERS], { minLength: 1 }),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ t: 'ExpireDeadlines' as const }) },
  { weight: 2, arbitrary: fc.constant({ t: 'Alarm' as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('CloseRoom' as const), op: user }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('CreateRoom' as const), user }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('UpdateRoom' as const),
      op: user,
      mode: fc.constantFrom('free' as const, 'apply' as const),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('ApplyForSeat' as const),
      user,
      seat: fc.option(seat),
    }),
  },
  { weight: 1, arbitrary: user.map((u) => ({ t: 'CancelSeatApplication' as const, user: u })) },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('ApproveSeatApplication' as const),
      user,
      op: user,
      seat: fc.option(seat),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('RejectSeatApplication' as const), user, op: user }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('InviteToSeat' as const),
      user,
      op: user,
      seat: fc.option(seat),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constantFrom('AcceptSeatInvitation' as const, 'DeclineSeatInvitation' as const),
      user,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('MoveToSeat' as const), user, op: user, seat }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('SetSeatCount' as const),
      op: user,
      count: fc.integer({ min: 1, max: SEATS + 1 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('SetMicMuted' as const), user, on: fc.boolean() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('SetSeatMuted' as const),
      seat,
      op: user,
      on: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('SendRoomMessage' as const), user }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('MuteChatUser' as const),
      user,
      op: user,
      seconds: fc.constantFrom(0, 1, 5, 60),
    }),
  },
);

export const stepArb: fc.Arbitrary<Step> = fc.record({
  dt: fc.oneof(
    { weight: 12, arbitrary: fc.integer({ min: 0, max: 3_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: 10_000, max: 70_000 }) },
  ),
  spec: specArb,
});

/**
 * The RTC provider's clock, which is not the server's: off by `skewMs` (ahead when positive),
 * and in whole seconds when `wholeSeconds` (TRTC's EventTs).
 */
export interface RtcClock {
  readonly skewMs: number;
  readonly wholeSeconds: boolean;
}

export const rtcClockArb: fc.Arbitrary<RtcClock> = fc.record({
  skewMs: fc.oneof(
    { weight: 1, arbitrary: fc.constant(0) },
    { weight: 3, arbitrary: fc.integer({ min: -5_000, max: 5_000 }) },
  ),
  wholeSeconds: fc.boolean(),
});

/** What the runtime keeps: the state, the version, the log; plus what the test remembers. */
export interface World {
  state: VoiceRoomState;
  version: number;
  nowMs: number;
  readonly events: VoiceRoomEvent[];
  /** State after each committed command (index = version), for snapshot checks. */
  readonly states: VoiceRoomState[];
  /** How many events the log held at each version. */
  readonly logLength: number[];
  /** Every mic session id seen in a MicTakenUp. */
  readonly sessions: string[];
  readonly rtcClock: RtcClock;
  /** Kept apart from the state (RTC clock): the last applied RTC time per session, per user. */
  readonly lastRtcTime: Map<string, number>;
  readonly lastUserRtcTime: Map<string, number>;
  readonly rtcSent: VoiceRoomCommand[];
}

function resolveUser(world: World, who: User | Holder): string {
  if (typeof who === 'string') return who;
  const holders = world.state.seats.flatMap((s) => (s.user_id === null ? [] : [s.user_id]));
  return holders[who.holder % holders.length] ?? USERS[who.holder % USERS.length]!;
}

function resolveSession(world: World, u: string, ref: SessionRef): string | undefined {
  switch (ref.k) {
    case 'current':
      return world.state.seats.find((s) => s.user_id === u)?.mic_session_id ?? undefined;
    case 'past':
      return world.sessions.length > 0 ? world.sessions[ref.n % world.sessions.length] : 'ms-0';
    case 'none':
      return undefined;
  }
}

export function resolve(world: World, spec: Spec): VoiceRoomCommand {
  switch (spec.t) {
    case 'SendRoomMessage':
      return { type: spec.t, user_id: spec.user, user_name: spec.user, content: 'hi' };
    case 'MuteChatUser':
      return {
        type: spec.t,
        user_id: spec.user,
        duration_s: spec.seconds,
        operator_user_id: spec.op,
      };
    case 'JoinRoom':
    case 'LeaveRoom':
    case 'RoomHeartbeat':
      return { type: spec.t, user_id: spec.user };
    case 'KickUser':
    case 'UnbanUser':
      return { type: spec.t, user_id: spec.user, operator_user_id: spec.op };
    case 'SetRoomAdmin':
      return { type: spec.t, user_id: spec.user, is_admin: spec.on, operator_user_id: spec.op };
    case 'SetMicSeatLock':
      return { type: spec.t, seat_index: spec.seat, locked: spec.on, operator_user_id: spec.op };
    case 'MicUp':
    case 'ChangeMicSeat':
      return { type: spec.t, user_id: spec.user, seat_index: spec.seat };
    case 'MicDown':
      return spec.op === null
        ? { type: spec.t, user_id: spec.user }
        : { type: spec.t, user_id: spec.user, operator_user_id: spec.op };
    case 'ConfirmMicPublishing': {
      const user_id = resolveUser(world, spec.user);
      return {
        type: spec.t,
        user_id,
        mic_session_id: resolveSession(world, user_id, spec.session) ?? 'ms-none',
      };
    }
    case 'RtcAudioStarted':
    case 'RtcAudioStopped':
    case 'RtcRoomExited': {
      const user_id = resolveUser(world, spec.user);
      const mic_session_id = resolveSession(world, user_id, spec.session);
      const rtcNow = world.nowMs + world.rtcClock.skewMs - spec.age;
      const event_time_ms = world.rtcClock.wholeSeconds ? Math.floor(rtcNow / 1000) * 1000 : rtcNow;
      const command: VoiceRoomCommand =
        mic_session_id === undefined
          ? { type: spec.t, user_id, event_time_ms }
          : { type: spec.t, user_id, event_time_ms, mic_session_id };
      world.rtcSent.push(command);
      return command;
    }
    case 'ReplayRtc':
      return world.rtcSent.length > 0
        ? world.rtcSent[spec.n % world.rtcSent.length]!
        : { type: 'RtcRoomExited', user_id: OWNER, event_time_ms: world.nowMs };
    case 'SendGift':
      return {
        type: spec.t,
        sender_user_id: spec.user,
        receiver_user_ids: spec.to,
        gift_id: 'rose',
        count: 1,
        unit_price: 5,
      };
    case 'ExpireDeadlines':
      return { type: spec.t };
    case 'Alarm': {
      const due = domain.nextDeadline(world.state);
      if (due !== null && due > world.nowMs) world.nowMs = due;
      return domain.alarmCommand(world.state, world.nowMs) ?? { type: 'ExpireDeadlines' };
    }
    case 'CloseRoom':
      return { type: spec.t, operator_user_id: spec.op };
    case 'CreateRoom':
      return { type: spec.t, owner_user_id: spec.user, title: 'again', seat_count: SEATS };
    case 'UpdateRoom':
      return { type: spec.t, operator_user_id: spec.op, seat_mode: spec.mode };
    case 'ApplyForSeat':
    case 'ApproveSeatApplication': {
      const seatIndex = spec.seat === null ? {} : { seat_index: spec.seat };
      return spec.t === 'ApplyForSeat'
        ? { type: spec.t, user_id: spec.user, ...seatIndex }
        : { type: spec.t, user_id: spec.user, operator_user_id: spec.op, ...seatIndex };
    }
    case 'CancelSeatApplication':
    case 'AcceptSeatInvitation':
    case 'DeclineSeatInvitation':
      return { type: spec.t, user_id: spec.user };
    case 'MoveToSeat':
      return { type: spec.t, user_id: spec.user, operator_user_id: spec.op, seat_index: spec.seat };
    case 'SetSeatCount':
      return { type: spec.t, operator_user_id: spec.op, seat_count: spec.count };
    case 'SetMicMuted':
      return { type: spec.t, user_id: spec.user, muted: spec.on };
    case 'SetSeatMuted':
      return { type: spec.t, seat_index: spec.seat, muted: spec.on, operator_user_id: spec.op };
    case 'InviteToSeat': {
      const seatIndex = spec.seat === null ? {} : { seat_index: spec.seat };
      return { type: spec.t, user_id: spec.user, operator_user_id: spec.op, ...seatIndex };
    }
    case 'RejectSeatApplication':
      return { type: spec.t, user_id: spec.user, operator_user_id: spec.op };
  }
}

/** decide + evolve as the cell runtime does it; returns the decision. */
export function run(world: World, command: VoiceRoomCommand) {
  const result = domain.decide(
    world.state,
    command,
    ctx({ nowMs: world.nowMs, version: world.version + 1 }),
  );
  if (!isDomainError(result) && result.length > 0) {
    world.version += 1;
    world.state = deepFreeze(result.reduce((s, e) => domain.evolve(s, e), world.state));
    world.events.push(...result);
    world.states[world.version] = world.state;
    world.logLength[world.version] = world.events.length;
    for (const event of result) {
      if (event.type === 'MicTakenUp') {
        assert.equal(event.mic_session_room_version, world.version);
        assert.ok(!world.sessions.includes(event.mic_session_id), 'mic session ids are unique');
        world.sessions.push(event.mic_session_id);
      }
      const rtcTime =
        (event.type === 'MicPublishingConfirmed' && event.source === 'rtc') ||
        event.type === 'MicRtcAnchored'
          ? event.event_time_ms
          : event.type === 'MicReleased'
            ? event.event_time_ms
            : undefined;
      if (rtcTime !== undefined && 'mic_session_id' in event) {
        const last = world.lastRtcTime.get(event.mic_session_id) ?? -Infinity;
        world.lastRtcTime.set(event.mic_session_id, Math.max(last, rtcTime));
        const lastOfUser = world.lastUserRtcTime.get(event.user_id) ?? -Infinity;
        world.lastUserRtcTime.set(event.user_id, Math.max(lastOfUser, rtcTime));
      }
    }
  }
  return result;
}

export function newWorld(rtcClock: RtcClock = { skewMs: 0, wholeSeconds: false }): World {
  const world: World = {
    state: deepFreeze(domain.initialState({ appCode: 'app', roomId: 'r' })),
    version: 0,
    nowMs: T0,
    events: [],
    states: [],
    logLength: [0],
    sessions: [],
    rtcClock,
    lastRtcTime: new Map(),
    lastUserRtcTime: new Map(),
    rtcSent: [],
  };
  world.states[0] = world.state;
  run(world, { type: 'CreateRoom', owner_user_id: OWNER, title: 'Props', seat_count: SEATS });
  run(world, { type: 'SetRoomAdmin', user_id: ADMIN, is_admin: true, operator_user_id: OWNER });
  // Everyone but `__proto__` starts in the room: that one must also work never having joined.
  for (const u of USERS.slice(0, 3)) run(world, { type: 'JoinRoom', user_id: u });
  assert.equal(world.version, 5);
  return world;
}
