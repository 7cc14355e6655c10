// Records the whole recovery chain of a scenario: watches Nodes, Leases, VolumeAttachments, (when
// the CRD exists) NodeFences, and in the scenario's namespaces Pods, PersistentVolumeClaims,
// EndpointSlices and Events (Events of "default" too), and turns every change into named
// transitions with the local receive time and the API's own timestamps, stored in an indexed log
// (transition-log.ts). With countBackground, the Lease renewals of nodes nothing concerns are
// counted instead (background.ts).
import { k8s, isNotFound } from "../kube/client.js";
import { waitUntil, withTimeout } from "../util/time.js";
import { NODE_FENCE_CRD } from "../controller/crd.js";
import { Background, ZONE_LABEL, type BackgroundCounts, type BackgroundOptions } from "./background.js";
import { TransitionLog, type TransitionHistory, type TransitionListener } from "./transition-log.js";
import { transitionsOf } from "./transitions.js";
import type { Transition, WatchedKind } from "./types.js";
import { ResourceWatcher, type ChangeType } from "./watcher.js";

export interface TimelineRecorderOptions {
  /** Record pods, claims, EndpointSlices and events of these namespaces only (default: all namespaces). */
  namespaces?: string[];
  /** Called for every transition as it is recorded, counted ones included (progress, live logs). */
  onTransition?: (transition: Transition) => void;
  onError?: (kind: WatchedKind, error: unknown) => void;
  /**
   * Count, do not store, the Lease renewals of nodes nothing concerns (background.ts): a node's
   * renewals are stored once it is focused (the fault's nodes), has a pod of the watched
   * namespaces, or any change of its own after the initial lists (a condition, a taint, an
   * Event, a fence, a VolumeAttachment). Default false: every transition is stored.
   */
  countBackground?: boolean | BackgroundOptions;
  /** The clock of receive times (default Date.now; tests). */
  now?: () => number;
}

interface WatchSpec {
  kind: WatchedKind;
  apiVersion: string;
  apiKind: string;
  path: string;
  namespace?: string;
}

/** The kinds watched per scenario namespace, with their API group version and collection. */
const NAMESPACED_KINDS = ["Pod", "PersistentVolumeClaim", "EndpointSlice", "Event"] as const;
type NamespacedKind = (typeof NAMESPACED_KINDS)[number];

const NAMESPACED_API: Record<NamespacedKind, { apiVersion: string; plural: string }> = {
  Pod: { apiVersion: "v1", plural: "pods" },
  PersistentVolumeClaim: { apiVersion: "v1", plural: "persistentvolumeclaims" },
  EndpointSlice: { apiVersion: "discovery.k8s.io/v1", plural: "endpointslices" },
  Event: { apiVersion: "v1", plural: "events" },
};

/** The watch of `kind` in `namespace` (undefined: every namespace). */
function namespacedSpec(kind: NamespacedKind, namespace: string | undefined): WatchSpec {
  const { apiVersion, plural } = NAMESPACED_API[kind];
  const group = apiVersion === "v1" ? "/api/v1" : `/apis/${apiVersion}`;
  const scope = namespace === undefined ? "" : `/namespaces/${namespace}`;
  return {
    kind,
    apiVersion,
    apiKind: kind,
    path: `${group}${scope}/${plural}`,
    ...(namespace === undefined ? {} : { namespace }),
  };
}

export class TimelineRecorder implements AsyncDisposable {
  readonly #kc: k8s.KubeConfig;
  readonly #options: TimelineRecorderOptions;
  readonly #abort = new AbortController();
  readonly #log = new TransitionLog();
  readonly #background: Background | undefined;
  /** Each node's zone label as last seen, what the timeline chart groups nodes by. */
  readonly #zones = new Map<string, string>();
  readonly #watchers: { kind: WatchedKind; watcher: ResourceWatcher; done: Promise<void> }[] = [];

  private constructor(kc: k8s.KubeConfig, options: TimelineRecorderOptions) {
    this.#kc = kc;
    this.#options = options;
    const background = options.countBackground ?? false;
    this.#background =
      background === false ? undefined : new Background(background === true ? {} : background);
  }

  /** Starts every watch and resolves once each has done its initial list. */
  static async start(kc: k8s.KubeConfig, options: TimelineRecorderOptions = {}): Promise<TimelineRecorder> {
    const recorder = new TimelineRecorder(kc, options);
    try {
      await recorder.#start();
    } catch (error) {
      await recorder.stop();
      throw error;
    }
    return recorder;
  }

  /**
   * A recorder that watches nothing: fed with observe(), as the watches feed a started one (tests,
   * replays of recorded objects).
   */
  static offline(options: TimelineRecorderOptions = {}): TimelineRecorder {
    return new TimelineRecorder(new k8s.KubeConfig(), options);
  }

  /**
   * Records one change as a watch reports it: `previous` is the last version seen (undefined when
   * new); `initial` when it is part of the first list.
   */
  observe(
    kind: WatchedKind,
    type: ChangeType,
    object: k8s.KubernetesObject,
    previous?: k8s.KubernetesObject,
    initial = false,
  ): void {
    this.#record(kind, type, object, previous, "watch", initial);
  }

  /** The stored transitions, in time order. */
  get transitions(): readonly Transition[] {
    return this.#log.all;
  }

  /** The stored transitions, indexed; its generation moves with every one stored. */
  get index(): TransitionHistory {
    return this.#log;
  }

  /** Calls `listener` with every transition stored from now on; returns its removal. */
  subscribe(listener: TransitionListener): () => void {
    return this.#log.subscribe(listener);
  }

  /**
   * Stores every renewal of these nodes from now on, and their recent ones kept aside (the fault's
   * nodes, named once the fault starts). Nothing changes without countBackground.
   */
  focus(nodes: readonly string[]): void {
    for (const node of nodes) this.#promote(node);
  }

  /** Each node's zone label as last seen ("" when unlabelled), a copy. */
  zones(): Map<string, string> {
    return new Map(this.#zones);
  }

  /** What was counted instead of stored; undefined without countBackground. */
  background(): BackgroundCounts | undefined {
    return this.#background?.counts();
  }

  /** Watch re-establishments after expiry or errors, per kind (evidence that gaps were bridged). */
  get relists(): Record<string, number> {
    return Object.fromEntries(this.#watchers.map((w) => [w.kind, w.watcher.relists]));
  }

  /**
   * Resolves with the first stored transition (past or future) that matches, as it is stored;
   * throws TIMEOUT after `timeoutMs`, ABORTED when `signal` aborts.
   */
  async waitFor(
    what: string,
    predicate: (t: Transition) => boolean,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Transition> {
    let found = this.#log.all.find(predicate);
    return waitUntil(() => found, {
      what,
      timeoutMs,
      subscribe: (wake) =>
        this.#log.subscribe((t) => {
          if (found === undefined && predicate(t)) {
            found = t;
            wake();
          }
        }),
      ...(signal ? { signal } : {}),
    });
  }

  /** Test seam: cuts every watch of `kind` (see ResourceWatcher.interrupt); returns the resume function. */
  interrupt(kind: WatchedKind, options: { expire: boolean }): () => void {
    const resumes = this.#watchers.filter((w) => w.kind === kind).map((w) => w.watcher.interrupt(options));
    return () => {
      for (const resume of resumes) resume();
    };
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await Promise.allSettled(this.#watchers.map((w) => w.done));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  async #start(): Promise<void> {
    const specs: WatchSpec[] = [
      { kind: "Node", apiVersion: "v1", apiKind: "Node", path: "/api/v1/nodes" },
      {
        kind: "Lease",
        apiVersion: "coordination.k8s.io/v1",
        apiKind: "Lease",
        namespace: "kube-node-lease",
        path: "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
      },
      {
        kind: "VolumeAttachment",
        apiVersion: "storage.k8s.io/v1",
        apiKind: "VolumeAttachment",
        path: "/apis/storage.k8s.io/v1/volumeattachments",
      },
    ];
    const namespaces = this.#options.namespaces;
    if (namespaces === undefined) {
      for (const kind of NAMESPACED_KINDS) specs.push(namespacedSpec(kind, undefined));
    } else {
      for (const namespace of new Set(namespaces))
        for (const kind of NAMESPACED_KINDS) specs.push(namespacedSpec(kind, namespace));
      // Node events live in "default"; controller events about nodes too.
      if (!namespaces.includes("default")) specs.push(namespacedSpec("Event", "default"));
    }
    if (await this.#crdExists(NODE_FENCE_CRD)) {
      specs.push({
        kind: "NodeFence",
        apiVersion: "rekindle.dev/v1alpha1",
        apiKind: "NodeFence",
        path: "/apis/rekindle.dev/v1alpha1/nodefences",
      });
    }
    for (const spec of specs) {
      const watcher = new ResourceWatcher(this.#kc, {
        apiVersion: spec.apiVersion,
        kind: spec.apiKind,
        path: spec.path,
        ...(spec.namespace ? { namespace: spec.namespace } : {}),
        signal: this.#abort.signal,
        onChange: (type, object, previous, source) => {
          this.#record(spec.kind, type, object, previous, source, !watcher.hasListed);
        },
        onError: (error) => this.#options.onError?.(spec.kind, error),
      });
      this.#watchers.push({ kind: spec.kind, watcher, done: watcher.run() });
    }
    await withTimeout(
      Promise.all(this.#watchers.map((w) => w.watcher.listed)),
      30_000,
      "the recorder's initial lists",
    );
  }

  #record(
    kind: WatchedKind,
    type: ChangeType,
    object: k8s.KubernetesObject,
    previous: k8s.KubernetesObject | undefined,
    source: "watch" | "relist",
    initial: boolean,
  ): void {
    const atMs = (this.#options.now ?? Date.now)();
    const before = type === "ADDED" ? undefined : previous;
    const after = type === "DELETED" ? undefined : object;
    const transitions = transitionsOf(
      { kind, atMs, source },
      before ?? (type === "DELETED" ? object : undefined),
      after,
    );
    if (kind === "Node") this.#noteNode(type, object, atMs, transitions.length === 0);
    for (const transition of transitions) {
      this.#store(transition, initial);
      this.#options.onTransition?.(transition);
    }
  }

  /** A Node's zone label, and a heartbeat counted when the update made no transition. */
  #noteNode(type: ChangeType, object: k8s.KubernetesObject, atMs: number, noTransition: boolean): void {
    const node = object.metadata?.name ?? "";
    const zone = object.metadata?.labels?.[ZONE_LABEL];
    if (type !== "DELETED") this.#zones.set(node, zone ?? "");
    if (this.#background === undefined) return;
    this.#background.zone(node, zone);
    if (type === "MODIFIED" && noTransition) this.#background.heartbeat(node, atMs);
  }

  /** Stores a transition, or counts it as background (see countBackground). */
  #store(t: Transition, initial: boolean): void {
    const background = this.#background;
    const node = t.node ?? "";
    if (background !== undefined && node !== "") {
      if (t.name === "lease-renewed") {
        if (!background.isPromoted(node)) {
          background.renewal(t);
          return;
        }
        background.storedRenewal(t);
      } else if (!initial || t.subject.kind === "Pod" || t.subject.kind === "NodeFence") {
        // Every node has conditions and Events in the initial lists: only later changes make it matter.
        this.#promote(node);
      }
    }
    this.#log.add(t);
  }

  /** Makes `node` matter: its recent renewals are stored (in time order), and every later one. */
  #promote(node: string): void {
    for (const renewal of this.#background?.promote(node) ?? []) this.#log.add(renewal);
  }

  async #crdExists(name: string): Promise<boolean> {
    try {
      await this.#kc.makeApiClient(k8s.ApiextensionsV1Api).readCustomResourceDefinition({ name });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }
}
