/**
 * The `logs` dimension's room, pure so it is unit-tested: a busy voice room whose members
 * heartbeat, come and go and take the mic, every command with a request id of its own (as a
 * retrying client sends them, so each leaves a `room_request_outcomes` row too).
 *
 * Round `r` of a room of `users` members (u0…u{users-1}, all joined after CreateRoom):
 * member `r mod users` leaves and joins again, member `r+1 mod users` takes seat `r mod
 * seats` and leaves it, then every member heartbeats at once, with one heartbeat of a
 * member who is not in the room (a client that missed its own leave: refused NOT_IN_ROOM,
 * an outcome without a log row). The four changes go one after another (each depends on
 * the one before), the heartbeats together, as many clients' would.
 */
import type { VoiceRoomCommand } from '../../src/voice-room/domain/types.js';

export interface LogsCommand {
  readonly command: VoiceRoomCommand;
  readonly requestId: string;
}

export interface LogsStep {
  /** Sent together (their order among themselves does not matter). */
  readonly together: readonly LogsCommand[];
}

export interface LogsWorkload {
  readonly users: number;
  readonly seats: number;
}

export const DEFAULT_WORKLOAD: LogsWorkload = { users: 16, seats: 8 };

/** The member who is never in the room: its heartbeats are refused. */
export const GHOST = 'ghost';

const user = (i: number) => `u${i}`;

/** CreateRoom, then every member joins (one command each). */
export function openingSteps(w: LogsWorkload): LogsStep[] {
  const create: LogsCommand = {
    requestId: 'open-create',
    command: { type: 'CreateRoom', owner_user_id: user(0), title: 'logs', seat_count: w.seats },
  };
  const joins = Array.from({ length: w.users }, (_, i) => ({
    requestId: `open-join-${i}`,
    command: { type: 'JoinRoom', user_id: user(i) } as const,
  }));
  return [{ together: [create] }, ...joins.map((join) => ({ together: [join] }))];
}

/** Round `r`: four changes one by one, then the heartbeats together. */
export function roundSteps(w: LogsWorkload, r: number): LogsStep[] {
  const comer = user(r % w.users);
  const speaker = user((r + 1) % w.users);
  const one = (k: string, command: VoiceRoomCommand): LogsStep => ({
    together: [{ requestId: `r${r}-${k}`, command }],
  });
  const heartbeats: LogsCommand[] = Array.from({ length: w.users }, (_, i) => ({
    requestId: `r${r}-hb${i}`,
    command: { type: 'RoomHeartbeat', user_id: user(i) },
  }));
  heartbeats.push({
    requestId: `r${r}-hb-ghost`,
    command: { type: 'RoomHeartbeat', user_id: GHOST },
  });
  return [
    one('leave', { type: 'LeaveRoom', user_id: comer }),
    one('join', { type: 'JoinRoom', user_id: comer }),
    one('up', { type: 'MicUp', user_id: speaker, seat_index: r % w.seats }),
    one('down', { type: 'MicDown', user_id: speaker }),
    { together: heartbeats },
  ];
}

/** Commands per round: four changes, a heartbeat per member and the ghost's. */
export function roundSize(w: LogsWorkload): number {
  return 4 + w.users + 1;
}

/**
 * The steps of a room of `commands` commands in all: the opening, then whole rounds, the
 * last one cut to what is left. Generated lazily (50,000 commands are a few MB of objects).
 */
export function* workloadSteps(w: LogsWorkload, commands: number): Generator<LogsStep> {
  let left = commands;
  const take = (step: LogsStep): LogsStep | null => {
    if (left <= 0) return null;
    const together = step.together.slice(0, left);
    left -= together.length;
    return { together };
  };
  for (const step of openingSteps(w)) {
    const taken = take(step);
    if (taken) yield taken;
  }
  for (let r = 0; left > 0; r++) {
    for (const step of roundSteps(w, r)) {
      const taken = take(step);
      if (taken) yield taken;
    }
  }
}
