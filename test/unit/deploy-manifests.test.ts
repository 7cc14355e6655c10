import { expect } from "chai";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { parse } from "yaml";
import { fenceDriverRegistry, genericFenceDrivers } from "../../lib/controller/drivers/registry.js";
import { parseFenceConfig } from "../../lib/controller/fence-config-parse.js";
import { controllerSettings, parseControllerFlags } from "../../lib/controller/flags.js";
import { k8s } from "../../lib/kube/client.js";
import { parseManifests, substitute } from "../../lib/kube/apply.js";
import { deployPath, PROJECT_ROOT } from "../../lib/util/project-files.js";

const SUBSTITUTIONS = {
  NAMESPACE: "ns",
  REPLICAS: "2",
  CSI_DRIVER: "sim.csi.rekindle.dev",
  KUBELET_VERSION: "v1.34.4",
  KWOK_VERSION: "v0.8.0",
  POD_START_MS: "1000",
  POD_START_MAX_MS: "1800",
  ATTACH_MS: "500",
  NODE: "worker-1",
  STORAGE_CLASS: "rekindle-sim",
  IMAGE: "rekindle:0.1.0",
  SHARED_DIR: "/var/rekindle-shared",
};

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? yamlFiles(join(dir, entry.name))
      : entry.name.endsWith(".yaml")
        ? [join(dir, entry.name)]
        : [],
  );
}

describe("deploy/: the manifests rekindle ships", function () {
  const files = yamlFiles(deployPath());

  it("exist", function () {
    expect(files.length).to.be.greaterThan(4);
  });

  for (const file of files) {
    it(`${file.slice(deployPath().length + 1)} parses with every placeholder filled`, function () {
      const text = substitute(readFileSync(file, "utf8"), SUBSTITUTIONS);
      expect(text).to.not.match(/@[A-Z_]+@/);
      const objects = parseManifests(text, file);
      expect(objects.length).to.be.greaterThan(0);
    });
  }

  it("kwok stages name their resource's apiGroup explicitly (kwok does not default it when read from --config)", function () {
    for (const file of files.filter((f) => f.includes(join("sim", "kwok")))) {
      for (const stage of parseManifests(substitute(readFileSync(file, "utf8"), SUBSTITUTIONS), file)) {
        const spec = (stage as { spec?: { resourceRef?: { apiGroup?: string }; selector?: unknown } }).spec;
        expect(spec?.resourceRef?.apiGroup, `${file}: ${stage.metadata?.name ?? ""}`).to.be.a("string").and
          .not.empty;
        // kwok silently drops a Stage without a selector.
        expect(spec?.selector, `${file}: ${stage.metadata?.name ?? ""}`).to.be.an("object");
      }
    }
  });
});

describe("the shipped controller manifests and image", function () {
  const objects = parseManifests(
    readFileSync(deployPath("controller", "deployment.yaml"), "utf8"),
    "deployment.yaml",
  );
  const deployment = objects.find((o) => o.kind === "Deployment") as k8s.V1Deployment;
  const fencing = objects.find((o) => o.kind === "ConfigMap") as k8s.V1ConfigMap;
  const pod = deployment.spec?.template.spec;
  const container = pod?.containers.find((c) => c.name === "controller");
  const args = container?.args ?? [];
  const flag = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);

  /** The volume mounted at the longest mountPath that holds `path`, and the path inside it. */
  function mountFor(path: string): { volume: k8s.V1Volume; inside: string } {
    const mount = (container?.volumeMounts ?? [])
      .filter((m) => path.startsWith(`${m.mountPath.replace(/\/$/, "")}/`))
      .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
    expect(mount, `no volume mounted over ${path}`).to.not.equal(undefined);
    const volume = pod?.volumes?.find((v) => v.name === mount?.name);
    expect(volume, `volume ${mount?.name ?? ""}`).to.not.equal(undefined);
    return { volume: volume!, inside: posix.relative(mount!.mountPath, path) };
  }

  it("the image runs as a numeric user, the one the pod asks for, which runAsNonRoot can verify", function () {
    const user = /^USER\s+(\S+)\s*$/m.exec(readFileSync(join(PROJECT_ROOT, "Dockerfile"), "utf8"))?.[1] ?? "";
    expect(user).to.match(/^\d+:\d+$/);
    const [uid, gid] = user.split(":").map(Number);
    for (const context of [pod?.securityContext, container?.securityContext]) {
      expect(context?.runAsNonRoot).to.equal(true);
      expect(context?.runAsUser).to.equal(uid).and.be.greaterThan(0);
      expect(context?.runAsGroup).to.equal(gid);
    }
  });

  it("the container is locked down: read-only root, no privilege escalation, no capabilities, RuntimeDefault seccomp", function () {
    expect(container?.securityContext).to.deep.include({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    expect(pod?.securityContext?.seccompProfile?.type).to.equal("RuntimeDefault");
  });

  it("every probe asks /healthz on the metrics port", function () {
    const port = container?.ports?.find((p) => p.name === "metrics");
    const { metrics } = controllerSettings(parseControllerFlags(args.slice(1)), { inCluster: true });
    expect(metrics.host).to.equal("0.0.0.0");
    expect(port?.containerPort).to.equal(metrics.port);
    for (const probe of [container?.startupProbe, container?.readinessProbe, container?.livenessProbe]) {
      expect(probe?.httpGet).to.deep.include({ path: "/healthz", port: "metrics" });
    }
  });

  it("a ClusterIP Service in the Deployment's namespace fronts the metrics port of its pods", function () {
    const [service] = parseManifests(
      readFileSync(deployPath("controller", "service.yaml"), "utf8"),
      "service.yaml",
    ) as k8s.V1Service[];
    expect(service?.kind).to.equal("Service");
    expect(service?.metadata?.namespace).to.equal(deployment.metadata?.namespace);
    expect(service?.spec?.type).to.equal("ClusterIP");
    const podLabels = deployment.spec?.template.metadata?.labels ?? {};
    for (const [key, value] of Object.entries(service?.spec?.selector ?? {})) {
      expect(podLabels[key], key).to.equal(value);
    }
    expect(service?.spec?.ports?.map((p) => [p.name, p.targetPort])).to.deep.equal([["metrics", "metrics"]]);
  });

  it("the fence configuration and the CA it names are mounted where the controller reads them", function () {
    const fenceConfigPath = flag("--fence-config") ?? "";
    const config = mountFor(fenceConfigPath);
    expect(config.volume.configMap?.name).to.equal(fencing.metadata?.name);
    const text = fencing.data?.[config.inside] ?? "";
    expect(text, `${config.inside} in ConfigMap ${fencing.metadata?.name ?? ""}`).to.not.equal("");
    const fenceConfig = parse(text) as { templates: Record<string, { options?: Record<string, string> }> };
    const caFiles = Object.values(fenceConfig.templates).flatMap((t) =>
      t.options?.["caFile"] !== undefined ? [t.options["caFile"]] : [],
    );
    expect(caFiles).to.not.be.empty;
    for (const caFile of caFiles) {
      const { volume, inside } = mountFor(caFile);
      const source = volume.configMap ?? volume.secret;
      expect(source, `${caFile} comes from a ConfigMap or Secret`).to.not.equal(undefined);
      const items = volume.configMap?.items ?? volume.secret?.items;
      if (items) expect(items.map((i) => i.path)).to.include(inside);
    }
    // The rest of the example passes the start-up check (its CA stood in by a readable file).
    const ca = join(mkdtempSync(join(tmpdir(), "rekindle-ca-")), "ca.crt");
    writeFileSync(ca, "-----BEGIN CERTIFICATE-----\n");
    for (const template of Object.values(fenceConfig.templates)) {
      if (template.options?.["caFile"] !== undefined) template.options["caFile"] = ca;
    }
    expect(() =>
      parseFenceConfig(
        fenceConfig,
        fenceDriverRegistry(genericFenceDrivers(new k8s.KubeConfig())),
        fenceConfigPath,
      ),
    ).to.not.throw();
  });
});
