// The recorded transitions, kept in time order and indexed by transition name, by node and by the
// changed object's kind and name, so a milestone derivation reads the few lists it needs instead of
// scanning everything; a generation counter that moves with every change (a derivation computed
// at one generation is current until it moves); and listeners told of each transition as it is
// stored, so waiting wakes on arrival instead of polling.
import type { Transition, TransitionName, WatchedKind } from "./types.js";

/** Read access to transitions in time order (atMs), by the keys milestone derivations look up. */
export interface TransitionIndex {
  /** Every transition, in time order. */
  readonly all: readonly Transition[];
  /** The transitions of this name. */
  named(name: TransitionName): readonly Transition[];
  /** The transitions concerning this node (Transition.node). */
  onNode(node: string): readonly Transition[];
  /** The transitions of objects of this kind (Transition.subject.kind). */
  ofKind(kind: WatchedKind): readonly Transition[];
  /** The transitions of one object, by kind, name and (namespaced kinds) namespace. */
  ofObject(kind: WatchedKind, name: string, namespace?: string): readonly Transition[];
}

/** A growing index: its generation moves with every transition stored, and any past prefix can be read. */
export interface TransitionHistory extends TransitionIndex {
  /** Equal generations, equal contents. */
  readonly generation: number;
  /** The transitions up to and including `atMs`, as an index. */
  until(atMs: number): TransitionIndex;
}

const NONE: readonly Transition[] = Object.freeze([]);

/** The index of the first transition at or after `atMs` in a list in time order. */
export function firstAtOrAfter(list: readonly Transition[], atMs: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((list[mid]?.atMs ?? 0) < atMs) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The transitions of a list in time order from `atMs` on. */
export function fromTime(list: readonly Transition[], atMs: number): readonly Transition[] {
  const at = firstAtOrAfter(list, atMs);
  return at === 0 ? list : list.slice(at);
}

/** The transitions of a list in time order up to and including `atMs`. */
export function untilTime(list: readonly Transition[], atMs: number): readonly Transition[] {
  const end = firstAtOrAfter(list, atMs + 1);
  return end === list.length ? list : list.slice(0, end);
}

/** Puts `t` into a list in time order after every transition of the same or an earlier time. */
function insertInOrder(list: Transition[], t: Transition): void {
  const last = list[list.length - 1];
  if (last === undefined || last.atMs <= t.atMs) {
    list.push(t);
    return;
  }
  list.splice(firstAtOrAfter(list, t.atMs + 1), 0, t);
}

function objectKey(kind: WatchedKind, name: string, namespace: string | undefined): string {
  return `${kind}/${namespace ?? ""}/${name}`;
}

export type TransitionListener = (transition: Transition) => void;

/** An indexed, growing set of transitions in time order (see the file comment). */
export class TransitionLog implements TransitionHistory {
  readonly #all: Transition[] = [];
  readonly #byName = new Map<TransitionName, Transition[]>();
  readonly #byNode = new Map<string, Transition[]>();
  readonly #byKind = new Map<WatchedKind, Transition[]>();
  readonly #byObject = new Map<string, Transition[]>();
  readonly #listeners = new Set<TransitionListener>();
  #generation = 0;

  /** A log of these transitions (stably ordered by time, as the recorder stores them). */
  static of(transitions: readonly Transition[]): TransitionLog {
    const log = new TransitionLog();
    for (const t of transitions) log.add(t);
    return log;
  }

  get all(): readonly Transition[] {
    return this.#all;
  }

  /** Moves with every transition stored: equal generations, equal contents. */
  get generation(): number {
    return this.#generation;
  }

  get size(): number {
    return this.#all.length;
  }

  /**
   * Stores `t` in time order: appended when it is the latest (as a live transition is), else put
   * after every transition of the same or an earlier time (one kept aside and stored late).
   */
  add(t: Transition): void {
    insertInOrder(this.#all, t);
    insertInOrder(listOf(this.#byName, t.name), t);
    insertInOrder(listOf(this.#byKind, t.subject.kind), t);
    insertInOrder(listOf(this.#byObject, objectKey(t.subject.kind, t.subject.name, t.subject.namespace)), t);
    if (t.node !== undefined && t.node !== "") insertInOrder(listOf(this.#byNode, t.node), t);
    this.#generation += 1;
    for (const listener of this.#listeners) listener(t);
  }

  named(name: TransitionName): readonly Transition[] {
    return this.#byName.get(name) ?? NONE;
  }

  onNode(node: string): readonly Transition[] {
    return this.#byNode.get(node) ?? NONE;
  }

  ofKind(kind: WatchedKind): readonly Transition[] {
    return this.#byKind.get(kind) ?? NONE;
  }

  ofObject(kind: WatchedKind, name: string, namespace?: string): readonly Transition[] {
    return this.#byObject.get(objectKey(kind, name, namespace)) ?? NONE;
  }

  /** Calls `listener` with every transition stored from now on; returns its removal. */
  subscribe(listener: TransitionListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** The transitions up to and including `atMs`, as an index (a view: later ones stay out). */
  until(atMs: number): TransitionIndex {
    return {
      all: untilTime(this.#all, atMs),
      named: (name) => untilTime(this.named(name), atMs),
      onNode: (node) => untilTime(this.onNode(node), atMs),
      ofKind: (kind) => untilTime(this.ofKind(kind), atMs),
      ofObject: (kind, name, namespace) => untilTime(this.ofObject(kind, name, namespace), atMs),
    };
  }
}

function listOf<K>(map: Map<K, Transition[]>, key: K): Transition[] {
  let list = map.get(key);
  if (list === undefined) {
    list = [];
    map.set(key, list);
  }
  return list;
}

/** An index of `transitions`: the log itself when it is one, else a log built from the list. */
export function indexOf(transitions: readonly Transition[] | TransitionIndex): TransitionIndex {
  return isIndex(transitions) ? transitions : TransitionLog.of(transitions);
}

function isIndex(value: readonly Transition[] | TransitionIndex): value is TransitionIndex {
  return !Array.isArray(value);
}
