/**
 * What the clients saw: every request with its request id and every attempt of it (which
 * node, when, what came back). The checker judges these against the rows in MySQL.
 */

/** What one attempt got back. */
export type Answer =
  | { readonly ok: true; readonly reply: Record<string, unknown> }
  /** `kind` from docs/errors.md; `unavailable` (and a transport failure) is retried. */
  | { readonly ok: false; readonly kind: string; readonly code: string };

export interface Attempt {
  readonly node: string;
  readonly startedAtMs: number;
  readonly endedAtMs: number;
  readonly answer: Answer;
  /** A deliberate re-send of a request that already had its answer (a lost reply). */
  readonly resend: boolean;
}

/** Which API a request went through. */
export type Api = 'voice' | 'meeting' | 'topup' | 'rtc';

export interface RequestRecord {
  readonly seq: number;
  readonly client: string;
  readonly api: Api;
  readonly method: string;
  readonly app: string;
  /** The voice room id or meeting code; null until known (a CreateMeeting's answer names it). */
  room: string | null;
  /** The request id as sent. */
  readonly requestId: string;
  /** The request id as the room's command log records it (meetings scope it to the caller). */
  readonly logRequestId: string;
  readonly body: Record<string, unknown>;
  readonly attempts: Attempt[];
}

/** An answer that ends the request: anything but `unavailable`. */
export function isFinal(answer: Answer): boolean {
  return answer.ok || answer.kind !== 'unavailable';
}

/** The first final answer of a request, or null when none came (outcome unknown). */
export function firstAnswer(record: RequestRecord): Answer | null {
  return record.attempts.find((a) => isFinal(a.answer))?.answer ?? null;
}

/** The final answers of a request, in order (the first one and those of re-sends). */
export function finalAnswers(record: RequestRecord): Answer[] {
  return record.attempts.filter((a) => isFinal(a.answer)).map((a) => a.answer);
}

export class History {
  readonly requests: RequestRecord[] = [];

  add(record: Omit<RequestRecord, 'seq' | 'attempts'>): RequestRecord {
    const full: RequestRecord = { ...record, seq: this.requests.length, attempts: [] };
    this.requests.push(full);
    return full;
  }
}
