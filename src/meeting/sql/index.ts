/**
 * The meeting with its SQL hooks: the single-meeting index written in the create/join
 * commit (invariant 6, enforced by the database), and the projections written there.
 */
import type { CellDomain } from '../../cell/domain.js';
import { defaultMeetingSettings, meetingKind } from '../domain/domain.js';
import type {
  MeetingCommand,
  MeetingEvent,
  MeetingSettings,
  MeetingState,
} from '../domain/types.js';
import type { SqlFlavor } from '../../adapters/sql/flavor.js';
import type { SqlStoreTypes } from '../../adapters/sql/sql-store-types.js';
import { claimActiveMeeting } from './active-members.js';
import { projectMeeting } from './projection.js';

export type MeetingSqlDomain = CellDomain<
  MeetingState,
  MeetingCommand,
  MeetingEvent,
  SqlStoreTypes
>;

export function meetingWithSql(
  flavor: SqlFlavor,
  settings: MeetingSettings = defaultMeetingSettings,
): MeetingSqlDomain {
  return {
    ...meetingKind(settings),
    inTransaction: {
      // Every command that makes a participant: create, join, and the waiting room's admit.
      appliesTo: (command) =>
        command.type === 'CreateMeeting' ||
        command.type === 'JoinMeeting' ||
        command.type === 'AdmitWaiting',
      apply: (trx, entry, key) => claimActiveMeeting(trx, flavor, entry, key),
    },
    project: projectMeeting,
  };
}
