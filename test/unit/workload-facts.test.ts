import { expect } from "chai";
import { parse } from "yaml";
import { RekindleError } from "../../lib/errors.js";
import {
  workloadFacts,
  type KubeObject,
  type WorkloadFactsOptions,
} from "../../lib/expect/workload-facts.js";
import { fixtureObjects } from "../support/workload-fixtures.js";
import { workloadHead } from "../support/workload-yaml.js";

const OPTIONS: WorkloadFactsOptions = {
  defaultNotReadyTolerationMs: 300_000,
  defaultUnreachableTolerationMs: 300_000,
};

/** Objects from YAML documents written in the test. */
function objects(...docs: string[]): KubeObject[] {
  return docs.map((d) => parse(d) as KubeObject);
}

function deployment(podSpec: string, extra = ""): string {
  return `${workloadHead("Deployment", "web", 4)}
${podSpec
  .trim()
  .split("\n")
  .map((l) => `      ${l}`)
  .join("\n")}
${extra}`;
}

const PAUSE = "containers: [{ name: c, image: pause }]";

function pdb(spec: string): string {
  return `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: web-pdb }
spec: { selector: { matchLabels: { app: web } }, ${spec} }`;
}

describe("workload facts from a workload's own manifests", function () {
  it("the fixtures: kind, replicas, labels, default tolerations, grace, QoS, volume and Service", function () {
    const web = workloadFacts("deployment", fixtureObjects("deployment.yaml"), OPTIONS);
    expect(web).to.deep.include({
      kind: "Deployment",
      name: "web",
      replicas: 1,
      unreachableTolerationMs: 300_000,
      ownUnreachableToleration: false,
      notReadyTolerationMs: 300_000,
      outOfServiceTolerationMs: 0,
      terminationGracePeriodMs: 30_000,
      qos: "Burstable",
      volume: "none",
      replacement: "at-deletion",
      priority: 0,
    });
    expect(web.matchLabels).to.deep.equal({ app: "web", "rekindle.dev/workload": "deployment" });
    expect(web.service).to.equal(undefined);
    const db = workloadFacts("statefulset", fixtureObjects("statefulset-pvc.yaml"), OPTIONS);
    expect(db).to.deep.include({
      kind: "StatefulSet",
      volume: "rwo-attach",
      replacement: "after-gone",
      service: "db",
    });
    const cache = workloadFacts("statefulset-plain", fixtureObjects("statefulset.yaml"), OPTIONS);
    expect(cache).to.deep.include({ volume: "none", service: "cache" });
  });

  it("RWO storage without an attach step counts as no volume to detach", function () {
    const db = workloadFacts("db", fixtureObjects("statefulset-pvc.yaml"), {
      ...OPTIONS,
      volumeAttachRequired: false,
    });
    expect(db.volume).to.equal("none");
  });

  it("own tolerationSeconds: the smallest match counts; Exists without seconds is forever; NoSchedule ones do not count", function () {
    const own = workloadFacts(
      "web",
      objects(
        deployment(`
${PAUSE}
tolerations:
  - { key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 30 }
  - { key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 60 }
  - { key: node.kubernetes.io/not-ready, operator: Exists, effect: NoSchedule }`),
      ),
      OPTIONS,
    );
    expect(own).to.deep.include({
      unreachableTolerationMs: 30_000,
      ownUnreachableToleration: true,
      notReadyTolerationMs: 300_000,
    });
    const forever = workloadFacts(
      "web",
      objects(deployment(`${PAUSE}\ntolerations: [{ operator: Exists }]`)),
      OPTIONS,
    );
    expect(forever).to.deep.include({
      unreachableTolerationMs: null,
      notReadyTolerationMs: null,
      outOfServiceTolerationMs: null,
    });
  });

  it("a DaemonSet tolerates not-ready and unreachable forever and is never replaced elsewhere", function () {
    const ds = workloadFacts(
      "agent",
      objects(`
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent }
spec:
  selector: { matchLabels: { app: agent } }
  template: { metadata: { labels: { app: agent } }, spec: { ${PAUSE} } }`),
      { ...OPTIONS, daemonSetPods: 3 },
    );
    expect(ds).to.deep.include({
      replicas: 3,
      unreachableTolerationMs: null,
      notReadyTolerationMs: null,
      replacement: "never",
      qos: "BestEffort",
    });
  });

  it("PodDisruptionBudgets resolve against replicas, percentages rounded up", function () {
    const budget = (spec: string) =>
      workloadFacts("web", objects(deployment(PAUSE), pdb(spec)), OPTIONS).disruptionBudget;
    expect(budget('maxUnavailable: "25%"')).to.deep.include({ desiredHealthy: 3, maxUnavailable: 1 });
    expect(budget('maxUnavailable: "30%"')).to.deep.include({ desiredHealthy: 2, maxUnavailable: 2 }); // ceil(1.2)
    expect(budget('minAvailable: "50%"')).to.deep.include({ desiredHealthy: 2, maxUnavailable: 2 });
    expect(budget('minAvailable: "60%"')).to.deep.include({ desiredHealthy: 3, maxUnavailable: 1 }); // ceil(2.4)
    expect(budget("maxUnavailable: 0")).to.deep.include({ desiredHealthy: 4, maxUnavailable: 0 });
    expect(budget("minAvailable: 5")).to.deep.include({ desiredHealthy: 5, maxUnavailable: 0 });
    expect(budget("minAvailable: 1, unhealthyPodEvictionPolicy: AlwaysAllow")).to.deep.include({
      alwaysAllowUnhealthy: true,
    });
    const none = workloadFacts(
      "web",
      objects(deployment(PAUSE), pdb("maxUnavailable: 1").replace("app: web", "app: other")),
      OPTIONS,
    );
    expect(none.disruptionBudget).to.equal(undefined);
  });

  it("QoS as the kubelet computes it", function () {
    const qos = (resources: string, init = "") =>
      workloadFacts(
        "web",
        objects(deployment(`containers: [{ name: c, image: pause, resources: ${resources} }]${init}`)),
        OPTIONS,
      ).qos;
    expect(qos("{}")).to.equal("BestEffort");
    expect(qos("{ requests: { memory: 64Mi } }")).to.equal("Burstable");
    // Limits alone: requests default to them.
    expect(qos("{ limits: { cpu: 100m, memory: 64Mi } }")).to.equal("Guaranteed");
    expect(qos("{ requests: { cpu: 100m, memory: 32Mi }, limits: { cpu: 100m, memory: 64Mi } }")).to.equal(
      "Burstable",
    );
    expect(qos("{ limits: { memory: 64Mi } }")).to.equal("Burstable");
    expect(
      qos(
        "{ limits: { cpu: 1, memory: 1Gi } }",
        "\ninitContainers: [{ name: i, image: pause, resources: { requests: { cpu: 1 } } }]",
      ),
    ).to.equal("Burstable");
  });

  it("priority from spec.priority, a PriorityClass in the set, a built-in class, or the global default", function () {
    const priority = (spec: string, ...more: string[]) =>
      workloadFacts("web", objects(deployment(`${PAUSE}\n${spec}`), ...more), OPTIONS);
    const cls = (name: string, value: number, globalDefault = false) =>
      `{ apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: { name: ${name} }, value: ${value}, globalDefault: ${globalDefault} }`;
    expect(priority("priorityClassName: high", cls("high", 1000)).priority).to.equal(1000);
    expect(priority("priorityClassName: unknown").priority).to.equal(0);
    expect(priority("priority: 7").priority).to.equal(7);
    expect(priority("", cls("base", 50, true)).priority).to.equal(50);
    expect(priority("priorityClassName: system-node-critical")).to.deep.include({
      critical: true,
      priority: 2_000_001_000,
    });
  });

  it("volumes: RWX claims, claims by name, and claims not in the set (assumed RWO)", function () {
    const volume = (volumes: string, ...more: string[]) =>
      workloadFacts("web", objects(deployment(`${PAUSE}\nvolumes: ${volumes}`), ...more), OPTIONS).volume;
    const claim = (mode: string) =>
      `{ apiVersion: v1, kind: PersistentVolumeClaim, metadata: { name: data }, spec: { accessModes: [${mode}] } }`;
    const byName = "[{ name: d, persistentVolumeClaim: { claimName: data } }]";
    expect(volume(byName, claim("ReadWriteMany"))).to.equal("rwx");
    expect(volume(byName, claim("ReadWriteOnce"))).to.equal("rwo-attach");
    expect(volume(byName)).to.equal("rwo-attach");
    expect(volume("[{ name: tmp, emptyDir: {} }]")).to.equal("none");
  });

  it("Jobs: parallelism bounded by completions; a podFailurePolicy waits for the old pod", function () {
    const job = (spec: string) =>
      workloadFacts(
        "batch",
        objects(`
apiVersion: batch/v1
kind: Job
metadata: { name: batch }
spec:
  ${spec}
  template: { spec: { restartPolicy: Never, ${PAUSE} } }`),
        OPTIONS,
      );
    expect(job("parallelism: 3\n  completions: 2")).to.deep.include({
      replicas: 2,
      replacement: "at-deletion",
    });
    expect(job("podFailurePolicy: { rules: [] }")).to.deep.include({
      replicas: 1,
      replacement: "after-gone",
    });
  });

  it("refuses kinds it does not model, and a set with no workload or two, naming them", function () {
    const refused = (docs: KubeObject[]) => {
      try {
        workloadFacts("nightly", docs, OPTIONS);
      } catch (error) {
        expect(error).to.be.instanceOf(RekindleError);
        expect((error as RekindleError).code).to.equal("INVALID_INPUT");
        return (error as RekindleError).message;
      }
      throw new Error("not refused");
    };
    const cron = refused(objects("{ apiVersion: batch/v1, kind: CronJob, metadata: { name: backup } }"));
    expect(cron).to.include("CronJob backup").and.include("Deployment, StatefulSet, DaemonSet, Job, Pod");
    expect(refused(objects("{ apiVersion: v1, kind: Service, metadata: { name: s } }"))).to.include(
      "no workload",
    );
    expect(refused([...objects(deployment(PAUSE)), ...fixtureObjects("statefulset.yaml")])).to.include(
      "Deployment web, StatefulSet cache",
    );
  });

  it("a bare Pod: one replica, never replaced; the Service the file names wins", function () {
    const pod = workloadFacts(
      "solo",
      objects(
        `{ apiVersion: v1, kind: Pod, metadata: { name: solo, labels: { app: solo } }, spec: { ${PAUSE} } }`,
      ),
      { ...OPTIONS, service: "front" },
    );
    expect(pod).to.deep.include({ kind: "Pod", replicas: 1, replacement: "never", service: "front" });
    expect(pod.matchLabels).to.deep.equal({ app: "solo" });
  });
});
