// One sim cluster's live state as this process sees it: the state file is the truth (another
// process, the CLI or a fence driver, may change its nodes), and every process it starts is
// recorded there so a later `sim down` can stop it.
import { timingProfile, type TimingProfile } from "../../profiles.js";
import { existsSync, mkdirSync } from "node:fs";
import { RekindleError } from "../../../errors.js";
import { loadKubeConfig, type k8s } from "../../../kube/client.js";
import { trackProcess } from "../../../util/cleanup.js";
import { spawnDaemon, type DaemonRecord, type DaemonSpec } from "../../../util/daemon.js";
import type { Progress } from "../../../util/progress.js";
import { simLayout, type SimLayout } from "./layout.js";
import { readSimState, writeSimState, type SimClusterState, type SimNodeState } from "./state.js";

export class SimSession {
  readonly layout: SimLayout;
  readonly state: SimClusterState;
  readonly progress: Progress;
  /** Whether processes this session starts outlive this Node process. */
  readonly detached: boolean;
  /** The state file keeps the profile by name; it is parsed once, here. */
  readonly profile: TimingProfile;
  #kc: k8s.KubeConfig | undefined;

  constructor(state: SimClusterState, progress: Progress, detached: boolean) {
    this.state = state;
    this.layout = simLayout(state.root);
    this.progress = progress;
    this.detached = detached;
    this.profile = timingProfile(state.profile);
  }

  kubeConfig(): k8s.KubeConfig {
    this.#kc ??= loadKubeConfig(this.layout.kubeconfig);
    return this.#kc;
  }

  node(nodeName: string): SimNodeState {
    const node = this.state.nodes.find((n) => n.name === nodeName);
    if (!node) {
      throw RekindleError.invalidInput(
        "node",
        nodeName,
        this.state.nodes.map((n) => n.name),
      );
    }
    return node;
  }

  save(): void {
    writeSimState(this.layout.stateFile, this.state);
  }

  /**
   * Changes one node's record as the state file holds it now: reload, change, save, with no await
   * in between. Whoever awaited an API call since its own reload (a fence driver powering off one
   * node while the harness starts another, in this process or another) would otherwise save a
   * stale copy over the other's change.
   */
  commitNode(nodeName: string, change: (node: SimNodeState) => void): void {
    this.reload();
    change(this.node(nodeName));
    this.save();
  }

  /** commitNode for several nodes at once: one reload, one save (nothing to save for none). */
  commitNodes(nodeNames: readonly string[], change: (node: SimNodeState) => void): void {
    if (nodeNames.length === 0) return;
    this.reload();
    for (const name of nodeNames) change(this.node(name));
    this.save();
  }

  /**
   * Takes what other processes change from the state file: nodes (stopped, started), shared kwoks, helper
   * components (the clock webhook), clock skews and an apiserver pause.
   */
  reload(): void {
    if (!existsSync(this.layout.stateFile)) return;
    const saved = readSimState(this.layout.stateFile);
    this.state.nodes = saved.nodes;
    this.state.components = saved.components;
    if (saved.kwokGroups) this.state.kwokGroups = saved.kwokGroups;
    else delete this.state.kwokGroups;
    if (saved.clock) this.state.clock = saved.clock;
    else delete this.state.clock;
    if (saved.apiserverPause) this.state.apiserverPause = saved.apiserverPause;
    else delete this.state.apiserverPause;
  }

  /** Starts a process tagged with the run id; unless detached it dies with this Node process. */
  spawn(spec: DaemonSpec, key: string): DaemonRecord {
    mkdirSync(spec.env?.["KWOK_WORKDIR"] ?? this.layout.kwokDir, { recursive: true });
    const record = spawnDaemon(spec, this.state.runId);
    if (!this.detached) trackProcess(key, record);
    return record;
  }

  /** Starts a control-plane or helper process and records it (in start order). */
  startComponent(spec: DaemonSpec): DaemonRecord {
    const record = this.spawn(spec, spec.name);
    this.state.components.push(record);
    this.save();
    return record;
  }
}
