import { expect } from "chai";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import {
  CONTROLLER_FIXTURES,
  CONTROLLER_USER_OBJECTS,
  controllerImageSource,
  MOUNTED_CA_FILE,
  userSuppliedObjects,
  webhookFenceConfig,
} from "../../lib/cluster/kind/in-cluster-controller.js";
import { parseManifests } from "../../lib/kube/apply.js";
import { k8s } from "../../lib/kube/client.js";
import { parseFenceConfig } from "../../lib/controller/fence-config-parse.js";
import { fenceDriverRegistry, genericFenceDrivers } from "../../lib/controller/drivers/registry.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";

const deploymentYaml = readFileSync(join(PROJECT_ROOT, "deploy", "controller", "deployment.yaml"), "utf8");

describe("the controller in-cluster on kind: what the user supplies beside the fixtures", function () {
  const webhook = {
    url: "https://172.18.0.1:40123",
    caPem: "-----BEGIN CERTIFICATE-----\n…",
    token: "t0ken",
  };

  it("writes a fence configuration the controller's own parser accepts: every node through the webhook", function () {
    expect(parse(webhookFenceConfig(webhook.url))).to.have.nested.property(
      "templates.kind-power.options.caFile",
      MOUNTED_CA_FILE,
    );
    // The parser reads caFile: here a file of this machine stands where the pod mounts the CA.
    const dir = mkdtempSync(join(tmpdir(), "rekindle-ca-"));
    const caFile = join(dir, "ca.crt");
    writeFileSync(caFile, webhook.caPem);
    const registry = fenceDriverRegistry(genericFenceDrivers(new k8s.KubeConfig()));
    const config = parseFenceConfig(parse(webhookFenceConfig(webhook.url, caFile)), registry, "fence.yaml");
    rmSync(dir, { recursive: true, force: true });
    expect(config.defaultTemplate).to.equal("kind-power");
    const template = config.templates["kind-power"];
    expect(template?.driver).to.equal("webhook");
    expect(template?.options).to.deep.equal({ url: webhook.url, caFile });
    expect(template?.secretRef?.name).to.equal(CONTROLLER_USER_OBJECTS.credentials);
  });

  it("names exactly what the shipped deployment.yaml mounts: the fencing ConfigMap, the CA at caFile, the Secret", function () {
    const objects = parseManifests(deploymentYaml, "deployment.yaml");
    const deployment = objects.find((o) => o.kind === "Deployment") as k8s.V1Deployment;
    const volumes = deployment.spec?.template.spec?.volumes ?? [];
    const mounts = deployment.spec?.template.spec?.containers[0]?.volumeMounts ?? [];
    const caVolume = volumes.find((v) => v.configMap?.name === CONTROLLER_USER_OBJECTS.ca);
    const caMount = mounts.find((m) => m.name === caVolume?.name);
    expect(`${caMount?.mountPath ?? ""}/${caVolume?.configMap?.items?.[0]?.path ?? ""}`).to.equal(
      MOUNTED_CA_FILE,
    );
    expect(volumes.some((v) => v.configMap?.name === CONTROLLER_USER_OBJECTS.fencing)).to.equal(true);
    const supplied = userSuppliedObjects(webhook);
    expect(supplied.map((o) => `${o.kind}/${o.metadata?.namespace}/${o.metadata?.name}`)).to.deep.equal([
      "Secret/rekindle-system/bmc-credentials",
      "ConfigMap/rekindle-system/rekindle-bmc-ca",
      "ConfigMap/rekindle-system/rekindle-fencing",
    ]);
    expect((supplied[0] as k8s.V1Secret).stringData).to.deep.equal({ token: "t0ken" });
    expect((supplied[1] as k8s.V1ConfigMap).data?.["ca.crt"]).to.equal(webhook.caPem);
  });

  it("applies every fixture file there is, unchanged, CRD and namespace first", function () {
    const files = readFileSync(join(PROJECT_ROOT, "deploy", "controller", "rbac.yaml"), "utf8");
    expect(files).to.include("kind: Namespace");
    expect([...CONTROLLER_FIXTURES]).to.deep.equal([
      "crd.yaml",
      "rbac.yaml",
      "priorityclass.yaml",
      "deployment.yaml",
      "service.yaml",
      "poddisruptionbudget.yaml",
    ]);
  });

  it("takes the controller image from REKINDLE_CONTROLLER_IMAGE: build (default) or the engine's; refuses anything else", function () {
    expect(controllerImageSource({})).to.equal("build");
    expect(controllerImageSource({ REKINDLE_CONTROLLER_IMAGE: "engine" })).to.equal("engine");
    expect(() => controllerImageSource({ REKINDLE_CONTROLLER_IMAGE: "rekindle:latest" }))
      .to.throw(/REKINDLE_CONTROLLER_IMAGE.*rekindle:latest.*build, engine/)
      .with.property("code", "INVALID_INPUT");
  });
});
