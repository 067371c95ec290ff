/**
 * One meeting at a time: each meeting's members replayed from its logged events (joined,
 * left, ended), no user active in two meetings at the end, and the single-meeting index
 * (`meeting_active_members`) naming exactly the meeting each active user is in.
 */
import { Verdict, groupBy, roomKey, type InvariantResult, type Rows } from './types.js';

export function checkSingleMeeting(rows: Rows): InvariantResult {
  const verdict = new Verdict('every meeting user active in at most one meeting');
  const meetings = rows.cells.filter((c) => c.kind === 'meeting');
  const byRoom = groupBy(rows.log, (r) => roomKey(r.app, r.room));
  const activeIn = new Map<string, string[]>(); // app/user → meetings
  for (const meeting of meetings) {
    verdict.checked++;
    const active = new Set<string>();
    const entries = [...(byRoom.get(roomKey(meeting.app, meeting.room)) ?? [])];
    for (const entry of entries.sort((a, b) => a.version - b.version)) {
      for (const e of entry.events) {
        const user = typeof e.user_id === 'string' ? e.user_id : '';
        if (e.type === 'MemberJoined') active.add(user);
        else if (e.type === 'MemberLeft') active.delete(user);
        else if (e.type === 'MeetingEnded') active.clear();
      }
    }
    for (const user of active) {
      const key = `${meeting.app}/${user}`;
      activeIn.set(key, [...(activeIn.get(key) ?? []), meeting.room]);
    }
  }
  for (const [user, rooms] of activeIn) {
    if (rooms.length > 1) verdict.fail(`${user} active in ${rooms.join(' and ')}`);
  }
  const indexed = new Map(rows.activeMembers.map((m) => [`${m.app}/${m.user}`, m.room]));
  for (const [user, rooms] of activeIn) {
    if (!rooms.includes(indexed.get(user) ?? '')) {
      verdict.fail(
        `${user} active in ${rooms.join(', ')}, the index says ${indexed.get(user) ?? 'none'}`,
      );
    }
  }
  for (const [user, room] of indexed) {
    if (!activeIn.has(user))
      verdict.fail(`the index puts ${user} in ${room}, where they are not active`);
  }
  return verdict.result();
}
