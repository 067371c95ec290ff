/**
 * What the checker reads: the rows of MySQL after the run (../read-rows.ts) and what the
 * clients and the webhook receiver observed. Every check is a pure function of these.
 */
import type { RequestRecord } from '../history.js';
import type { Delivery } from '../webhook-receiver.js';

export interface CellRow {
  readonly app: string;
  readonly room: string;
  readonly kind: string;
  readonly version: number;
}

export interface LogRow {
  readonly app: string;
  readonly room: string;
  readonly version: number;
  readonly requestId: string;
  readonly commandType: string;
  readonly events: readonly { readonly type: string; readonly [field: string]: unknown }[];
}

export interface OutcomeRow {
  readonly app: string;
  readonly room: string;
  readonly requestId: string;
  readonly version: number;
  readonly outcome: {
    readonly reply?: unknown;
    readonly error?: { readonly kind: string; readonly code: string };
  };
}

export interface OutboxRow {
  readonly id: number;
  readonly eventId: string;
  readonly app: string;
  readonly room: string;
  readonly roomVersion: number;
  readonly type: string;
  readonly status: string;
}

export interface WalletRow {
  readonly app: string;
  readonly user: string;
  readonly balance: number;
}

export interface LedgerRow {
  readonly app: string;
  readonly requestId: string;
  readonly kind: string;
  readonly user: string;
  readonly amount: number;
  readonly room: string | null;
}

export interface ActiveMemberRow {
  readonly app: string;
  readonly user: string;
  readonly room: string;
}

export interface Rows {
  readonly cells: readonly CellRow[];
  readonly log: readonly LogRow[];
  readonly outcomes: readonly OutcomeRow[];
  readonly outbox: readonly OutboxRow[];
  readonly wallets: readonly WalletRow[];
  readonly ledger: readonly LedgerRow[];
  readonly activeMembers: readonly ActiveMemberRow[];
}

export interface Observed {
  readonly requests: readonly RequestRecord[];
  readonly deliveries: readonly Delivery[];
}

export interface InvariantResult {
  readonly name: string;
  readonly pass: boolean;
  /** How many things were judged (rooms, requests, users, events…), so a pass is not vacuous. */
  readonly checked: number;
  /** The first few violations, each one line. */
  readonly counterexamples: readonly string[];
}

/** Collects violations, keeping the first few for the report. */
export class Verdict {
  readonly #examples: string[] = [];
  #violations = 0;
  checked = 0;

  constructor(
    readonly name: string,
    private readonly keep = 5,
  ) {}

  fail(example: string): void {
    this.#violations++;
    if (this.#examples.length < this.keep) this.#examples.push(example);
  }

  result(): InvariantResult {
    const examples =
      this.#violations > this.#examples.length
        ? [...this.#examples, `… ${this.#violations - this.#examples.length} more`]
        : this.#examples;
    return {
      name: this.name,
      pass: this.#violations === 0,
      checked: this.checked,
      counterexamples: examples,
    };
  }
}

/** `app/room`, the key rows and requests are grouped by. */
export const roomKey = (app: string, room: string): string => `${app}/${room}`;

export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
