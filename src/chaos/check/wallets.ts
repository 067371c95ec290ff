/**
 * Money: every wallet = its top-ups − what it sent + what it received, the gifts counted
 * from the command log's GiftSent events (what committed), the top-ups from the ledger; and
 * the ledger's gift rows are exactly the logged gifts, each charged its total once.
 */
import { Verdict, type InvariantResult, type Rows } from './types.js';

interface GiftSent {
  readonly type: 'GiftSent';
  readonly sender_user_id: string;
  readonly receiver_user_ids: readonly string[];
  readonly count: number;
  readonly unit_price: number;
  readonly total_price: number;
}

export function checkWallets(rows: Rows): InvariantResult {
  const verdict = new Verdict('every wallet = top-ups − sent + received');
  const expected = new Map<string, number>();
  const add = (app: string, user: string, amount: number) => {
    const key = `${app}/${user}`;
    expected.set(key, (expected.get(key) ?? 0) + amount);
  };
  for (const l of rows.ledger) if (l.kind === 'topup') add(l.app, l.user, l.amount);

  const charges = new Map(
    rows.ledger.filter((l) => l.kind === 'gift').map((l) => [`${l.app}#${l.requestId}`, l]),
  );
  const logged = new Set<string>();
  for (const entry of rows.log) {
    for (const event of entry.events) {
      if (event.type !== 'GiftSent') continue;
      const gift = event as unknown as GiftSent;
      const id = `${entry.app}#${entry.requestId}`;
      logged.add(id);
      add(entry.app, gift.sender_user_id, -gift.total_price);
      for (const receiver of gift.receiver_user_ids)
        add(entry.app, receiver, gift.unit_price * gift.count);
      const charge = charges.get(id);
      if (!charge || charge.user !== gift.sender_user_id || charge.amount !== -gift.total_price) {
        verdict.fail(
          `gift ${id} at ${entry.room} v${entry.version}: ledger ${JSON.stringify(charge ?? null)}`,
        );
      }
    }
  }
  for (const id of charges.keys()) {
    if (!logged.has(id)) verdict.fail(`ledger charge ${id} without a committed gift`);
  }
  const actual = new Map(rows.wallets.map((w) => [`${w.app}/${w.user}`, w.balance]));
  for (const key of new Set([...expected.keys(), ...actual.keys()])) {
    verdict.checked++;
    const want = expected.get(key) ?? 0;
    const have = actual.get(key) ?? 0;
    if (want !== have) verdict.fail(`${key}: balance ${have}, top-ups − sent + received = ${want}`);
  }
  return verdict.result();
}
