/**
 * The command log against itself and against what the clients were told: one commit per
 * (room, version) with no gap; every acknowledged command in the log exactly once, at the
 * version it was told; every answer to a request id the first one; nothing refused committed.
 */
import { firstAnswer, finalAnswers, type Answer, type RequestRecord } from '../history.js';
import {
  Verdict,
  groupBy,
  roomKey,
  type InvariantResult,
  type LogRow,
  type Observed,
  type OutcomeRow,
  type Rows,
} from './types.js';

/** Requests that ran in a room cell (voice-room and meeting commands). */
const inCell = (r: RequestRecord) => r.api === 'voice' || r.api === 'meeting';

const requestKey = (app: string, room: string, requestId: string) =>
  `${roomKey(app, room)}#${requestId}`;

function logByRequest(rows: Rows): Map<string, LogRow[]> {
  return groupBy(rows.log, (r) => requestKey(r.app, r.room, r.requestId));
}

function outcomeByRequest(rows: Rows): Map<string, OutcomeRow> {
  return new Map(rows.outcomes.map((o) => [requestKey(o.app, o.room, o.requestId), o]));
}

/** Every room's versions are 1…N, each once, N being the room row's version. */
export function checkVersions(rows: Rows): InvariantResult {
  const verdict = new Verdict('one commit per (room, version), no gap');
  const byRoom = groupBy(rows.log, (r) => roomKey(r.app, r.room));
  for (const cell of rows.cells) {
    verdict.checked++;
    const key = roomKey(cell.app, cell.room);
    const versions = (byRoom.get(key) ?? []).map((r) => r.version).sort((a, b) => a - b);
    for (let i = 1; i < versions.length; i++) {
      if (versions[i] === versions[i - 1]) verdict.fail(`${key}: two commits at v${versions[i]}`);
    }
    const distinct = [...new Set(versions)];
    const gap = distinct.findIndex((v, i) => v !== i + 1);
    if (gap >= 0)
      verdict.fail(`${key}: v${gap + 1} missing (log has ${distinct.slice(0, 8).join(',')}…)`);
    const top = distinct.at(-1) ?? 0;
    if (top !== cell.version)
      verdict.fail(`${key}: log ends at v${top}, the room row says v${cell.version}`);
  }
  for (const key of byRoom.keys()) {
    if (!rows.cells.some((c) => roomKey(c.app, c.room) === key))
      verdict.fail(`${key}: log rows without a room row`);
  }
  return verdict.result();
}

/** The room version a voice-room answer reports (meeting answers report none). */
function reportedVersion(answer: Answer): number | null {
  if (!answer.ok) return null;
  const v = answer.reply.room_version;
  return typeof v === 'number' ? v : null;
}

/**
 * Every acknowledged command is in the log exactly once, at the version it was told; one
 * acknowledged without a log row must have been a no-op, which its recorded outcome shows
 * (ok, at the version it was told). An acknowledged top-up is one ledger row.
 */
export function checkAcknowledged(rows: Rows, observed: Observed): InvariantResult {
  const verdict = new Verdict('every acknowledged command in the log once, at its version');
  const logged = logByRequest(rows);
  const outcomes = outcomeByRequest(rows);
  for (const record of observed.requests) {
    const answer = firstAnswer(record);
    if (!answer?.ok) continue;
    if (record.api === 'topup') {
      verdict.checked++;
      const rowsOf = rows.ledger.filter(
        (l) => l.app === record.app && l.requestId === record.requestId,
      );
      const amount = Number(record.body.amount);
      if (rowsOf.length !== 1 || rowsOf[0]!.kind !== 'topup' || rowsOf[0]!.amount !== amount) {
        verdict.fail(
          `top-up ${record.requestId} acknowledged, ledger has ${JSON.stringify(rowsOf)}`,
        );
      }
      continue;
    }
    if (!inCell(record) || record.room === null) continue;
    verdict.checked++;
    const key = requestKey(record.app, record.room, record.logRequestId);
    const entries = logged.get(key) ?? [];
    const told = reportedVersion(answer);
    const outcome = outcomes.get(key);
    const what = `${record.method} ${key}`;
    if (entries.length > 1) {
      verdict.fail(
        `${what}: in the log ${entries.length} times (v${entries.map((e) => e.version).join(', v')})`,
      );
    } else if (entries.length === 1) {
      const at = entries[0]!.version;
      if (told !== null && at !== told) verdict.fail(`${what}: told v${told}, logged at v${at}`);
      if (outcome && outcome.version !== at)
        verdict.fail(`${what}: logged at v${at}, outcome at v${outcome.version}`);
    } else if (!outcome || outcome.outcome.error || (told !== null && outcome.version !== told)) {
      verdict.fail(
        `${what}: acknowledged (v${told ?? '?'}) but neither logged nor a recorded no-op`,
      );
    }
  }
  return verdict.result();
}

/** An answer without the flag that only says it was a repeat. */
function comparable(answer: Answer): string {
  if (!answer.ok) return `error ${answer.code}`;
  const { duplicate: _duplicate, ...reply } = answer.reply;
  return JSON.stringify(reply);
}

/** Every final answer to one request id equals its first, and agrees with the recorded outcome. */
export function checkRetries(rows: Rows, observed: Observed): InvariantResult {
  const verdict = new Verdict('every retry answered with the first answer');
  const outcomes = outcomeByRequest(rows);
  for (const record of observed.requests) {
    const answers = finalAnswers(record);
    if (answers.length === 0) continue;
    const first = comparable(answers[0]!);
    if (record.attempts.length > 1) verdict.checked++;
    for (const later of answers.slice(1)) {
      if (comparable(later) !== first) {
        verdict.fail(
          `${record.method} ${record.requestId}: first ${first.slice(0, 120)}, then ${comparable(later).slice(0, 120)}`,
        );
        break;
      }
    }
    if (!inCell(record) || record.room === null) continue;
    const outcome = outcomes.get(requestKey(record.app, record.room, record.logRequestId));
    if (!outcome) continue;
    const answer = answers[0]!;
    const stored = outcome.outcome.error ? `error ${outcome.outcome.error.code}` : 'ok';
    const told = answer.ok ? 'ok' : `error ${answer.code}`;
    const version = reportedVersion(answer);
    if (stored !== told || (version !== null && version !== outcome.version)) {
      verdict.fail(
        `${record.method} ${record.requestId}: told ${told} v${version ?? '?'}, recorded ${stored} v${outcome.version}`,
      );
    }
  }
  return verdict.result();
}

/** A request whose final answer was a refusal left no log row and no ledger row. */
export function checkRefusedNotCommitted(rows: Rows, observed: Observed): InvariantResult {
  const verdict = new Verdict('no command acknowledged as failed found committed');
  const loggedIds = groupBy(rows.log, (r) => `${r.app}#${r.requestId}`);
  const ledgerIds = new Set(rows.ledger.map((l) => `${l.app}#${l.requestId}`));
  for (const record of observed.requests) {
    const answer = firstAnswer(record);
    if (!answer || answer.ok) continue;
    if (record.api === 'rtc') continue; // a refused RTC event is acknowledged with code 0, never an error
    verdict.checked++;
    const id = `${record.app}#${record.logRequestId}`;
    const logged = loggedIds.get(id);
    if (logged) {
      verdict.fail(
        `${record.method} ${record.requestId} refused ${answer.code}, committed at ${logged[0]!.room} v${logged[0]!.version}`,
      );
    }
    if (ledgerIds.has(`${record.app}#${record.requestId}`)) {
      verdict.fail(
        `${record.method} ${record.requestId} refused ${answer.code}, in the wallet ledger`,
      );
    }
  }
  return verdict.result();
}
