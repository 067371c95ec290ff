/**
 * Seats, replayed from each voice room's logged events with a model of their own (not the
 * product's evolve): a seat is taken only when free and by a user on no other seat, moved
 * from a seat its user holds to a free one, released by the user holding it. At no version
 * may a seat have two users or a user two seats.
 */
import { Verdict, groupBy, roomKey, type InvariantResult, type Rows } from './types.js';

interface SeatEvent {
  readonly type: string;
  readonly user_id?: string;
  readonly seat_index?: number;
  readonly from_seat_index?: number;
}

export function checkSeats(rows: Rows): InvariantResult {
  const verdict = new Verdict('no seat with two users, no user with two seats');
  const voiceRooms = new Set(
    rows.cells.filter((c) => c.kind === 'voice_room').map((c) => roomKey(c.app, c.room)),
  );
  const byRoom = groupBy(
    rows.log.filter((r) => voiceRooms.has(roomKey(r.app, r.room))),
    (r) => roomKey(r.app, r.room),
  );
  for (const [key, entries] of byRoom) {
    verdict.checked++;
    const holder = new Map<number, string>(); // seat → user
    const seatOf = new Map<string, number>(); // user → seat
    const take = (where: string, seat: number, user: string) => {
      const other = holder.get(seat);
      if (other !== undefined)
        verdict.fail(`${where}: seat ${seat} given to ${user} while ${other} holds it`);
      const mine = seatOf.get(user);
      if (mine !== undefined)
        verdict.fail(`${where}: ${user} takes seat ${seat} while on seat ${mine}`);
      holder.set(seat, user);
      seatOf.set(user, seat);
    };
    const release = (where: string, seat: number, user: string) => {
      if (holder.get(seat) !== user)
        verdict.fail(
          `${where}: ${user} leaves seat ${seat}, held by ${holder.get(seat) ?? 'nobody'}`,
        );
      holder.delete(seat);
      if (seatOf.get(user) === seat) seatOf.delete(user);
    };
    for (const entry of [...entries].sort((a, b) => a.version - b.version)) {
      for (const raw of entry.events) {
        const e = raw as SeatEvent;
        const where = `${key} v${entry.version} ${e.type}`;
        if (e.type === 'MicTakenUp') take(where, e.seat_index!, e.user_id!);
        else if (e.type === 'MicSeatChanged') {
          release(where, e.from_seat_index!, e.user_id!);
          take(where, e.seat_index!, e.user_id!);
        } else if (e.type === 'MicReleased') release(where, e.seat_index!, e.user_id!);
        else if (e.type === 'RoomClosed') {
          holder.clear();
          seatOf.clear();
        }
      }
    }
  }
  return verdict.result();
}
