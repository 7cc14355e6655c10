// kube-controller-manager on a kind cluster: a static pod in the control-plane container. Its
// flags change by rewriting the pod's manifest (the kubelet replaces the pod when the file changes);
// its log is followed through the API into a file on this machine, where the forced-detach
// milestones are read from (lib/observe/forced-detach.ts).
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { PassThrough } from "node:stream";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseDocument, isSeq } from "yaml";
import { RekindleError } from "../../errors.js";
import { k8s } from "../../kube/client.js";
import type { Progress } from "../../util/progress.js";
import { pollUntil, sleep } from "../../util/time.js";
import type { ControllerManagerControl } from "../provider.js";
import type { KindNodes } from "./nodes.js";

const MANIFEST = "/etc/kubernetes/manifests/kube-controller-manager.yaml";
/** kubeadm's manifest as the cluster was made; outside manifests/, where the kubelet would run it. */
const ORIGINAL = "/etc/kubernetes/kube-controller-manager.rekindle-original.yaml";
const NAMESPACE = "kube-system";
const CONTAINER = "kube-controller-manager";
/** The kubelet re-reads static pod manifests every 20 s (fileCheckFrequency); the new pod then starts. */
const RESTART_TIMEOUT_MS = 180_000;

export interface KindControllerManagerInit {
  /** The cluster's API (read when first needed). */
  kc: () => k8s.KubeConfig;
  nodes: KindNodes;
  controlPlane: string;
  progress: Progress;
}

/** `extraFlags` appended to the manifest's command (kubeadm's: `kube-controller-manager`, then flags). */
export function withExtraFlags(manifest: string, extraFlags: readonly string[]): string {
  const doc = parseDocument(manifest);
  const command = doc.getIn(["spec", "containers", 0, "command"]);
  if (!isSeq(command))
    throw new RekindleError("PRECONDITION", `${MANIFEST} has no spec.containers[0].command list`);
  for (const flag of extraFlags) command.add(flag);
  return doc.toString();
}

export class KindControllerManager implements ControllerManagerControl {
  readonly #init: KindControllerManagerInit;
  #logDir: string | undefined;
  #stopLog: (() => void) | undefined;

  constructor(init: KindControllerManagerInit) {
    this.#init = init;
  }

  get #pod(): string {
    return `${CONTAINER}-${this.#init.controlPlane}`;
  }

  async restartControllerManager(extraFlags: readonly string[]): Promise<void> {
    const { nodes, controlPlane, progress } = this.#init;
    const cp = controlPlane;
    await nodes.run(
      cp,
      ["sh", "-c", `test -f ${ORIGINAL} || cp ${MANIFEST} ${ORIGINAL}`],
      "saving kube-controller-manager's manifest",
    );
    const original = await nodes.run(cp, ["cat", ORIGINAL], "reading kube-controller-manager's manifest");
    const manifest = extraFlags.length === 0 ? original : withExtraFlags(original, extraFlags);
    const current = await nodes.run(cp, ["cat", MANIFEST], "reading kube-controller-manager's manifest");
    // The same file would not make the kubelet replace the pod: it already runs with these flags.
    if (current === manifest) return;
    const before = await this.#configHash();
    const encoded = Buffer.from(manifest).toString("base64");
    // Written beside, then renamed: the kubelet never reads half a manifest.
    await nodes.run(
      cp,
      ["sh", "-c", `echo '${encoded}' | base64 -d > ${ORIGINAL}.next && mv ${ORIGINAL}.next ${MANIFEST}`],
      "writing kube-controller-manager's manifest",
    );
    const said = extraFlags.length > 0 ? `with ${extraFlags.join(" ")}` : "with its usual flags";
    const phase = progress.phase(`restarting kube-controller-manager ${said} (kind static pod)`);
    try {
      await pollUntil(
        async () => {
          const pod = await this.#mirrorPod();
          const hash = pod?.metadata?.annotations?.["kubernetes.io/config.hash"];
          const ready = pod?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
          return hash !== undefined && hash !== before && ready === true ? true : undefined;
        },
        {
          timeoutMs: RESTART_TIMEOUT_MS,
          intervalMs: 1000,
          what: "kube-controller-manager's new static pod to be Ready",
        },
      );
      phase.end("Ready");
    } catch (error) {
      phase.end("failed");
      throw error;
    }
  }

  /** A file on this machine that receives kube-controller-manager's log from the first call on. */
  controllerManagerLogPath(): string {
    if (this.#logDir === undefined) {
      this.#logDir = mkdtempSync(join(tmpdir(), "rekindle-kcm-log-"));
      this.#stopLog = this.#follow(join(this.#logDir, "kube-controller-manager.log"));
    }
    return join(this.#logDir, "kube-controller-manager.log");
  }

  /** Stops following the log and removes its file. Idempotent. */
  stop(): void {
    this.#stopLog?.();
    this.#stopLog = undefined;
    if (this.#logDir !== undefined) rmSync(this.#logDir, { recursive: true, force: true });
    this.#logDir = undefined;
  }

  async #mirrorPod(): Promise<k8s.V1Pod | undefined> {
    const core = this.#init.kc().makeApiClient(k8s.CoreV1Api);
    return core.readNamespacedPod({ name: this.#pod, namespace: NAMESPACE }).catch(() => undefined);
  }

  async #configHash(): Promise<string | undefined> {
    return (await this.#mirrorPod())?.metadata?.annotations?.["kubernetes.io/config.hash"];
  }

  /**
   * Follows the pod's log into `path`; when the stream ends (the pod was replaced, the connection
   * dropped) it reconnects from a few seconds back. A line read twice does no harm: a forced
   * detach is a milestone once, at its first time.
   */
  #follow(path: string): () => void {
    const file = createWriteStream(path, { flags: "a" });
    let stopped = false;
    let current: AbortController | undefined;
    const log = new k8s.Log(this.#init.kc());
    // Read through a call: stop() sets it while the loop awaits.
    const isStopped = () => stopped;
    const loop = async () => {
      let sinceSeconds: number | undefined;
      while (!isStopped()) {
        // One stream per connection: the client pipes the response into it and ends it with the response.
        const connection = new PassThrough();
        connection.on("data", (chunk: Buffer) => {
          file.write(chunk);
        });
        const ended = new Promise<void>((resolve) => {
          connection.on("end", resolve);
          connection.on("close", resolve);
          connection.on("error", () => {
            resolve();
          });
        });
        try {
          current = await log.log(NAMESPACE, this.#pod, CONTAINER, connection, {
            follow: true,
            ...(sinceSeconds !== undefined ? { sinceSeconds } : { tailLines: 0 }),
          });
          if (isStopped()) current.abort();
          else await ended;
        } catch {
          // The pod is being replaced or the API server is busy: try again below.
        }
        sinceSeconds = 10;
        if (!isStopped()) await sleep(1000);
      }
    };
    void loop();
    return () => {
      stopped = true;
      current?.abort();
      file.end();
    };
  }
}
