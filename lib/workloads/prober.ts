// The in-cluster probe of a scenario file's workload ("recovered also needs this probe to answer"):
// one small pod per probed workload, pinned to a control-plane node so that losing a worker never
// takes the prober with it. Its main process only sleeps; its readiness probe is the check itself
// (bash's /dev/tcp against the Service's cluster IP and port, once a second), so the pod's Ready
// condition IS the probe's answer and the recorder's pod watch turns it into milestones
// (lib/observe/probe-answers.ts) with nothing else to run or poll.
import type { k8s } from "../kube/client.js";

/** Label on a prober pod: the id of the workload it probes (and what keeps it out of that workload's pods). */
export const PROBER_LABEL = "rekindle.dev/prober-of";

/** The label kubeadm puts on control-plane nodes, and the taint that keeps other pods off them. */
export const CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane";

export type ProbeCheck = { kind: "http"; port: number; path: string } | { kind: "tcp"; port: number };

/** One probe a second, no retries: a single failed answer is "failing", a single good one "answering". */
export const PROBE_PERIOD_SECONDS = 1;
/** The whole check (connect, request, status line) must finish within this, or it failed (coreutils timeout). */
export const PROBE_CHECK_TIMEOUT = "0.8";

/**
 * The check, for bash with the target in PROBE_HOST / PROBE_PORT / PROBE_PATH (environment, so a
 * path is never spliced into shell text). TCP: the connection is accepted. HTTP: a GET whose status
 * line says 2xx or 3xx (HTTP/1.0, so the server closes the connection after answering).
 */
export function probeScript(kind: ProbeCheck["kind"]): string {
  const connect = 'exec 3<>"/dev/tcp/$PROBE_HOST/$PROBE_PORT" || exit 1';
  if (kind === "tcp") return `${connect}\nexit 0\n`;
  return [
    connect,
    String.raw`printf 'GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: rekindle-probe\r\n\r\n' "$PROBE_PATH" "$PROBE_HOST" >&3 || exit 1`,
    "IFS= read -r status <&3 || exit 1",
    'case "$status" in "HTTP/1."[01]" "[23][0-9][0-9]*) exit 0 ;; esac',
    "exit 1",
    "",
  ].join("\n");
}

/**
 * The command the kubelet runs as the readiness probe (also what a test runs locally), ended after
 * `timeoutSeconds` (default PROBE_CHECK_TIMEOUT) with coreutils timeout's exit code, 124.
 */
export function probeCommand(kind: ProbeCheck["kind"], timeoutSeconds = PROBE_CHECK_TIMEOUT): string[] {
  return ["timeout", timeoutSeconds, "bash", "-c", probeScript(kind)];
}

export interface ProberPodOptions {
  /** The probed workload's id (the scenario file's `name`). */
  workload: string;
  namespace: string;
  /** An image with bash and coreutils that every control-plane node already holds (it is never pulled). */
  image: string;
  /** Where the probe goes: the Service's cluster IP. */
  host: string;
  check: ProbeCheck;
}

/** The prober pod's name: "rekindle-probe-<workload>". */
export function proberName(workload: string): string {
  return `rekindle-probe-${workload}`;
}

/** The prober pod of one workload (see the file comment); the caller labels it with the run. */
export function proberPod(options: ProberPodOptions): k8s.V1Pod {
  const { workload, check } = options;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: proberName(workload),
      namespace: options.namespace,
      labels: { [PROBER_LABEL]: workload },
    },
    spec: {
      nodeSelector: { [CONTROL_PLANE_LABEL]: "" },
      tolerations: [{ key: CONTROL_PLANE_LABEL, operator: "Exists", effect: "NoSchedule" }],
      // Its main process is a sleep; nothing to shut down gracefully.
      terminationGracePeriodSeconds: 1,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      containers: [
        {
          name: "probe",
          image: options.image,
          imagePullPolicy: "Never",
          command: ["sleep", "infinity"],
          env: [
            { name: "PROBE_HOST", value: options.host },
            { name: "PROBE_PORT", value: String(check.port) },
            ...(check.kind === "http" ? [{ name: "PROBE_PATH", value: check.path }] : []),
          ],
          readinessProbe: {
            exec: { command: probeCommand(check.kind) },
            periodSeconds: PROBE_PERIOD_SECONDS,
            timeoutSeconds: 1,
            failureThreshold: 1,
            successThreshold: 1,
          },
          resources: { requests: { cpu: "10m", memory: "16Mi" } },
        },
      ],
    },
  };
}
