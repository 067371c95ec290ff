/**
 * {@link ReactionStore} on SQL. A claim is two statements: pick due ids, then take those
 * still due with one UPDATE that stamps a fresh claim token and pushes their due time a
 * lease ahead (a row another node took first is no longer due, so the UPDATE skips it);
 * the rows carrying the token are this claim's. MySQL cannot UPDATE … LIMIT a subquery of
 * the same table, hence the two steps.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ClaimedReaction, ReactionStore } from '../../cell/reactions.js';
import type { Database } from './schema.js';

export function sqlReactionStore(db: Kysely<Database>): ReactionStore {
  return {
    async claimDue({ types, nowMs, limit, leaseMs }) {
      if (types.length === 0 || limit <= 0) return [];
      const due = await db
        .selectFrom('room_reactions')
        .select('reaction_id')
        .where('status', '=', 'pending')
        .where('next_attempt_at_ms', '<=', nowMs)
        .where('reaction_type', 'in', [...types])
        .orderBy('next_attempt_at_ms')
        .orderBy('room_version')
        .limit(limit)
        .execute();
      if (due.length === 0) return [];
      const token = randomUUID();
      await db
        .updateTable('room_reactions')
        .set((eb) => ({
          claim_token: token,
          attempts: eb('attempts', '+', 1),
          next_attempt_at_ms: nowMs + leaseMs,
          updated_at_ms: nowMs,
        }))
        .where(
          'reaction_id',
          'in',
          due.map((r) => r.reaction_id),
        )
        .where('status', '=', 'pending')
        .where('next_attempt_at_ms', '<=', nowMs)
        .execute();
      const rows = await db
        .selectFrom('room_reactions')
        .selectAll()
        .where('claim_token', '=', token)
        .execute();
      return rows.map((r): ClaimedReaction => ({
        reactionId: r.reaction_id,
        key: { appCode: r.app_code, roomId: r.room_id },
        roomVersion: Number(r.room_version),
        type: r.reaction_type,
        data: r.data,
        attempts: Number(r.attempts),
        claimToken: token,
      }));
    },

    async done(reactionIds, claimToken) {
      if (reactionIds.length === 0) return;
      let query = db.deleteFrom('room_reactions').where('reaction_id', 'in', [...reactionIds]);
      if (claimToken !== undefined) query = query.where('claim_token', '=', claimToken);
      await query.execute();
    },

    async retry({ reactionId, claimToken }, { nextAttemptAtMs, failed, error }, nowMs) {
      await db
        .updateTable('room_reactions')
        .set({
          status: failed ? 'failed' : 'pending',
          next_attempt_at_ms: nextAttemptAtMs,
          last_error: error.slice(0, 1000),
          claim_token: null,
          updated_at_ms: nowMs,
        })
        .where('reaction_id', '=', reactionId)
        .where('claim_token', '=', claimToken)
        .execute();
    },
  };
}
