// A kubelet whose clock is off writes its own idea of "now" into the API: the node Lease's
// spec.renewTime and the node conditions' heartbeat times. KWOK is a Go binary (libfaketime does
// not reach Go's clock), so the sim shifts those fields as they are written, in a mutating
// admission webhook (clock-webhook-main.ts) that only the node's own kwok writes pass through.
//
// Why at admission and not by rewriting the Lease after each renewal: a rewrite leaves kwok's
// own renewTime in the API for a few milliseconds before the shifted one replaces it, and the
// node lifecycle controller counts a renewal only when renewTime moves past the last one it saved
// (`savedLease.Spec.RenewTime.Before(observed)`). Had it sampled kwok's value once, every shifted
// renewal after it would look older for the whole offset, and the node would go Unknown after
// --node-monitor-grace-period although its kubelet never stopped. At admission nothing but the
// shifted value is ever stored, and nothing conflicts with kwok's writes.
//
// One difference from a real kubelet remains: kwok schedules its next renewal from the expiry of
// the Lease it reads back, so with an offset below -(leaseDuration - renewInterval) it renews every
// second instead of every renew interval (a kubelet keeps its interval). More renewals, never
// fewer: the node does not look less alive for it.
//
// Everything here is pure: the webhook's answers and its configuration object.
import type { k8s } from "../../../kube/client.js";
import { formatMicroTime } from "../../../kube/micro-time.js";

export interface ClockSkew {
  /** How far the node's clock is from the true time: negative behind, positive ahead. */
  offsetMs: number;
  /**
   * false (default): the clock is slewed, so renewTime never moves back: a backward change makes
   * renewTime advance 1 ms per renewal until the node's clock is |change| behind (taking that
   * long), the state of a node whose clock was always off. true: the clock steps at once, as
   * `date -s` or an NTP step does; the node lifecycle controller then ignores the node's renewals
   * until its clock passes the last renewTime it saw.
   */
  step: boolean;
}

/** The MutatingWebhookConfiguration that exists while any node's clock is skewed. */
export const CLOCK_WEBHOOK_CONFIGURATION = "rekindle-sim-clock-skew";

/** An instant with microsecond precision, as MicroTime carries it. */
interface Instant {
  /** Whole milliseconds since the epoch. */
  ms: number;
  /** Microseconds past `ms` (0–999). */
  micros: number;
}

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

function parseInstant(text: string): Instant | undefined {
  const match = RFC3339.exec(text);
  if (!match?.[1] || !match[3]) return undefined;
  const seconds = Date.parse(`${match[1]}${match[3]}`);
  if (!Number.isFinite(seconds)) return undefined;
  const fraction = (match[2] ?? "").padEnd(6, "0").slice(0, 6);
  const micros = Number(fraction);
  return { ms: seconds + Math.floor(micros / 1000), micros: micros % 1000 };
}

/** metav1.Time: whole seconds, UTC. */
function formatTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function compare(a: Instant, b: Instant): number {
  return a.ms - b.ms || a.micros - b.micros;
}

/**
 * The renewTime a skewed kubelet writes when kwok writes `written`, the Lease holding `stored`
 * before (undefined on create). Undefined: not a timestamp, leave it.
 */
export function skewedRenewTime(
  written: string,
  stored: string | undefined,
  skew: ClockSkew,
): string | undefined {
  const raw = parseInstant(written);
  if (!raw) return undefined;
  const shifted: Instant = { ms: raw.ms + skew.offsetMs, micros: raw.micros };
  const previous = stored === undefined ? undefined : parseInstant(stored);
  if (!skew.step && previous && compare(shifted, previous) <= 0) {
    return formatMicroTime(previous.ms + 1, previous.micros);
  }
  return formatMicroTime(shifted.ms, shifted.micros);
}

/** One RFC 6902 operation, as admission webhooks answer with. */
export interface JsonPatchOperation {
  op: "add" | "replace";
  path: string;
  value: unknown;
}

interface LeaseLike {
  spec?: { renewTime?: string; acquireTime?: string };
}

/** The patch for a Lease create or update by the node's kwok: renewTime (and acquireTime) shifted. */
export function leasePatch(
  object: LeaseLike,
  oldObject: LeaseLike | undefined,
  skew: ClockSkew,
): JsonPatchOperation[] {
  const written = object.spec?.renewTime;
  const stored = oldObject?.spec?.renewTime;
  // Not a renewal (the renewTime is what was stored already): leave the write as it is.
  if (written === undefined || written === stored) return [];
  const renewTime = skewedRenewTime(written, stored, skew);
  if (renewTime === undefined) return [];
  const patch: JsonPatchOperation[] = [{ op: "replace", path: "/spec/renewTime", value: renewTime }];
  const acquire = object.spec?.acquireTime;
  if (acquire !== undefined && acquire !== oldObject?.spec?.acquireTime) {
    const shifted = skewedRenewTime(acquire, undefined, { offsetMs: skew.offsetMs, step: true });
    if (shifted !== undefined) patch.push({ op: "replace", path: "/spec/acquireTime", value: shifted });
  }
  return patch;
}

interface ConditionLike {
  type?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

interface NodeLike {
  status?: { conditions?: ConditionLike[] };
}

/**
 * The patch for a node status write by the node's kwok: each condition time this write changed
 * is shifted by the offset (the node lifecycle controller only asks whether a heartbeat changed,
 * so no slewing is needed here).
 */
export function nodeStatusPatch(
  object: NodeLike,
  oldObject: NodeLike | undefined,
  skew: ClockSkew,
): JsonPatchOperation[] {
  const patch: JsonPatchOperation[] = [];
  const before = new Map((oldObject?.status?.conditions ?? []).map((c) => [c.type, c]));
  for (const [index, condition] of (object.status?.conditions ?? []).entries()) {
    const old = before.get(condition.type);
    for (const field of ["lastHeartbeatTime", "lastTransitionTime"] as const) {
      const value = condition[field];
      if (value === undefined || value === old?.[field]) continue;
      const parsed = Date.parse(value);
      if (!Number.isFinite(parsed)) continue;
      patch.push({
        op: "replace",
        path: `/status/conditions/${index}/${field}`,
        value: formatTime(parsed + skew.offsetMs),
      });
    }
  }
  return patch;
}

/** The part of an AdmissionReview request the webhook reads. */
export interface AdmissionRequest {
  uid: string;
  kind?: { group?: string; kind?: string };
  subResource?: string;
  object?: unknown;
  oldObject?: unknown;
}

export interface AdmissionReviewResponse {
  apiVersion: "admission.k8s.io/v1";
  kind: "AdmissionReview";
  response: { uid: string; allowed: true; patchType?: "JSONPatch"; patch?: string };
}

/** Always allows; patches a Lease or a node status write by the skew. */
export function admissionResponse(request: AdmissionRequest, skew: ClockSkew): AdmissionReviewResponse {
  let patch: JsonPatchOperation[] = [];
  if (request.kind?.kind === "Lease") {
    patch = leasePatch(request.object as LeaseLike, request.oldObject as LeaseLike | undefined, skew);
  } else if (request.kind?.kind === "Node" && request.subResource === "status") {
    patch = nodeStatusPatch(request.object as NodeLike, request.oldObject as NodeLike | undefined, skew);
  }
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: {
      uid: request.uid,
      allowed: true,
      ...(patch.length > 0
        ? { patchType: "JSONPatch" as const, patch: Buffer.from(JSON.stringify(patch)).toString("base64") }
        : {}),
    },
  };
}

/** The webhook's URL path for a skew: the apiserver allows no query string in a webhook URL. */
export function skewPath(skew: ClockSkew): string {
  return `/skew/${skew.offsetMs}/${skew.step ? "step" : "slew"}`;
}

/** Reads a skew back from a request path; undefined for any other path. */
export function parseSkewPath(path: string): ClockSkew | undefined {
  const match = /^\/skew\/(-?\d+)\/(step|slew)$/.exec(path);
  if (!match?.[1]) return undefined;
  return { offsetMs: Number(match[1]), step: match[2] === "step" };
}

export interface ClockWebhookTarget {
  /** The webhook server's port on 127.0.0.1. */
  port: number;
  /** PEM bundle that verifies the webhook server's certificate. */
  caBundle: string;
  /** The user kwok writes as: only its writes are shifted (not the node lifecycle controller's). */
  kwokUser: string;
}

/**
 * The webhook configuration for the skewed nodes: one webhook per node, matched by the object's
 * name (a node Lease is named after its node) and the kwok user. Failure policy Ignore: if the
 * webhook server is gone, writes pass unshifted rather than failing.
 */
export function clockWebhookConfiguration(
  skews: Readonly<Record<string, ClockSkew>>,
  target: ClockWebhookTarget,
  labels: Record<string, string>,
): k8s.V1MutatingWebhookConfiguration {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: CLOCK_WEBHOOK_CONFIGURATION, labels },
    webhooks: Object.entries(skews)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([node, skew]) => ({
        name: `${node}.clock.sim.rekindle.dev`,
        admissionReviewVersions: ["v1"],
        sideEffects: "None",
        failurePolicy: "Ignore",
        timeoutSeconds: 2,
        reinvocationPolicy: "Never",
        clientConfig: {
          url: `https://127.0.0.1:${target.port}${skewPath(skew)}`,
          caBundle: Buffer.from(target.caBundle).toString("base64"),
        },
        rules: [
          {
            apiGroups: ["coordination.k8s.io"],
            apiVersions: ["v1"],
            operations: ["CREATE", "UPDATE"],
            resources: ["leases"],
            scope: "Namespaced",
          },
          { apiGroups: [""], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["nodes/status"] },
        ],
        matchConditions: [
          {
            name: "this-node",
            expression: `object.metadata.name == ${JSON.stringify(node)} && (request.resource.resource == "nodes" || request.namespace == "kube-node-lease")`,
          },
          {
            name: "its-kubelet",
            expression: `request.userInfo.username == ${JSON.stringify(target.kwokUser)}`,
          },
        ],
      })),
  };
}
