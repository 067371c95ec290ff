/**
 * Test-only given(events) / when(command) / then(events) for any {@link Decider}. The state
 * is built by folding the events through `evolve` (exactly what replay does) and
 * deep-frozen, so a decider that mutated its input would throw.
 */
import assert from 'node:assert/strict';
import {
  isDomainError,
  type Command,
  type DecideContext,
  type Decider,
  type Decision,
  type DomainError,
  type DomainEvent,
  type RoomKey,
} from '../decider.js';

export interface WhenOptions {
  readonly nowMs?: number;
  readonly version?: number;
  readonly requestId?: string;
}

export interface Given<S, C, E> {
  readonly state: S;
  when(command: C, options?: WhenOptions): When<S, E>;
}

export interface When<S, E> {
  readonly result: Decision<E>;
  /** Deep-equals the events; returns the state they lead to. */
  then(expected: readonly E[]): S;
  /** Asserts a DomainError with this code; the state is left as it was. */
  thenError(code: string): DomainError;
}

/** Plain functions (no `this`), so a test module may export them destructured. */
export interface DeciderSpec<S, C, E> {
  /** The context a command runs with, from the spec's defaults and `options`. */
  readonly ctx: (options?: WhenOptions) => DecideContext;
  readonly fold: (events: readonly E[], from?: S) => S;
  readonly decide: (state: S, command: C, options?: WhenOptions) => Decision<E>;
  /** State from events (nested arrays are flattened, so builders may return several). */
  readonly given: (...events: (E | readonly E[])[]) => Given<S, C, E>;
  /** State built directly, for states no event leads to. */
  readonly givenState: (state: S) => Given<S, C, E>;
}

export function deciderSpec<S, C extends Command, E extends DomainEvent>(
  decider: Decider<S, C, E>,
  defaults: { readonly key: RoomKey; readonly nowMs: number; readonly version: number },
): DeciderSpec<S, C, E> {
  const ctx = (options: WhenOptions = {}): DecideContext => {
    const version = options.version ?? defaults.version;
    return {
      key: defaults.key,
      nowMs: options.nowMs ?? defaults.nowMs,
      version,
      requestId: options.requestId ?? `req-${version}`,
    };
  };
  const fold = (events: readonly E[], from: S = decider.initialState(defaults.key)): S =>
    events.reduce((state, event) => decider.evolve(state, event), from);
  const decide = (state: S, command: C, options?: WhenOptions) =>
    decider.decide(state, command, ctx(options));
  const givenState = (state: S): Given<S, C, E> => {
    const frozen = deepFreeze(structuredClone(state));
    return {
      state: frozen,
      when(command, options) {
        const before = structuredClone(frozen);
        const result = decide(frozen, command, options);
        assert.deepEqual(frozen, before, 'decide must not change its input');
        return {
          result,
          then(expected) {
            assert.ok(
              !isDomainError(result),
              `expected events, got error ${isDomainError(result) ? result.code : ''}`,
            );
            assert.deepEqual(result, expected);
            return fold(result, frozen);
          },
          thenError(code) {
            assert.ok(isDomainError(result), `expected ${code}, got ${JSON.stringify(result)}`);
            assert.equal(result.code, code);
            return result;
          },
        };
      },
    };
  };
  return {
    ctx,
    fold,
    decide,
    given: (...events) => givenState(fold(events.flat() as E[])),
    givenState,
  };
}

/** Freezes a value and everything it holds, so a mutation throws (ESM is strict). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) {
      deepFreeze((value as Record<PropertyKey, unknown>)[key]);
    }
  }
  return value;
}
